/**
 * Model-checks the executable models and prints what TLC would print for them, as a table.
 *
 *   npx tsx test/spec/run-spec.ts
 *
 * Rows: the seed (`shared/seed/TpxTransport.tla`) at its `.cfg` bounds and at a larger bound, each
 * recounted independently (`recount.ts`); then our specification (`spec/TpxTransport.tla`) at its
 * `.cfg` bounds and at the larger bound. Exits non-zero on any violation, deadlock or disagreement.
 *
 * @module
 */
import { behaviours, explore, formatViolation, type Exploration, type StepLike } from './explore.js';
import { CFG_CONSTANTS, LARGER_CONSTANTS, seedMachine, type Constants } from './model.js';
import { EXTENDED_CFG_CONSTANTS, extendedMachine, type ExtendedConstants } from './model-extended.js';
import { closedForm, recountDepthFirst } from './recount.js';

interface Row {
  readonly model: string;
  readonly bounds: string;
  readonly exploration: Exploration<StepLike<unknown>>;
  readonly enumerated: number | undefined;
  readonly crossCheck: string;
}

function describeBounds(constants: Constants | ExtendedConstants): string {
  const parts = [`MaxTurns=${constants.maxTurns}`, `ToolIds={${constants.toolIds.join(',')}}`];
  if ('maxRetries' in constants)
    parts.push(`MaxRetries=${constants.maxRetries}`, `MaxChunks=${constants.maxChunks}`);
  return parts.join(' ');
}

function seedRow(label: string, constants: Constants): Row {
  const exploration = explore(seedMachine(), constants);
  let enumerated = 0;
  for (const _behaviour of behaviours(constants)) enumerated++;
  const recount = recountDepthFirst(constants.maxTurns, constants.toolIds.length);
  const formula = closedForm(constants.maxTurns, constants.toolIds.length);
  const dfsAgrees =
    recount.distinctStates === exploration.distinctStates &&
    recount.transitions === exploration.transitions &&
    recount.selfLoops === exploration.selfLoops &&
    recount.deadlocks === exploration.deadlocks &&
    recount.behaviours === exploration.behaviours;
  const formulaAgrees =
    formula.distinctStates === exploration.distinctStates &&
    formula.transitions === exploration.transitions &&
    formula.statesGenerated === exploration.statesGenerated &&
    formula.depth === exploration.depth &&
    formula.deadlocks === exploration.deadlocks &&
    formula.behaviours === exploration.behaviours;
  return {
    model: `seed ${label}`,
    bounds: describeBounds(constants),
    exploration,
    enumerated,
    crossCheck: `DFS ${dfsAgrees ? 'agrees' : 'DIFFERS'}, formula ${formulaAgrees ? 'agrees' : 'DIFFERS'}`,
  };
}

function extendedRow(label: string, constants: ExtendedConstants): Row {
  return {
    model: `spec/ ${label}`,
    bounds: describeBounds(constants),
    exploration: explore(extendedMachine(), constants),
    enumerated: undefined,
    crossCheck: '-',
  };
}

function printTable(rows: readonly Row[]): void {
  const header = [
    'model',
    'bounds',
    'distinct states',
    'transitions (stutters)',
    'states generated',
    'depth',
    'deadlocks',
    'violations',
    'behaviours',
    'cross-check',
  ];
  const cells = rows.map((row) => {
    const e = row.exploration;
    const counted = row.enumerated === undefined ? `${e.behaviours}` : `${row.enumerated} enumerated`;
    return [
      row.model,
      row.bounds,
      `${e.distinctStates}`,
      `${e.transitions} (${e.selfLoops})`,
      `${e.statesGenerated}`,
      `${e.depth}`,
      `${e.deadlocks}`,
      `${e.violations.length}`,
      counted,
      row.crossCheck,
    ];
  });
  const widths = header.map((title, column) =>
    Math.max(title.length, ...cells.map((line) => line[column]!.length)),
  );
  const format = (line: readonly string[]) =>
    line.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ');
  console.log(format(header).trimEnd());
  console.log(widths.map((width) => '-'.repeat(width)).join('-|-'));
  for (const line of cells) console.log(format(line).trimEnd());
}

const larger: ExtendedConstants = { ...LARGER_CONSTANTS, maxRetries: 2, maxChunks: 2 };
const rows = [
  seedRow('(a) .cfg', CFG_CONSTANTS),
  seedRow('(b) larger', LARGER_CONSTANTS),
  extendedRow('.cfg', EXTENDED_CFG_CONSTANTS),
  extendedRow('larger', larger),
];
printTable(rows);
console.log(
  '\ntransitions: successors generated from every reachable state, one per action and choice, stuttering ' +
    'self-loops included (in parentheses); states generated = initial states + transitions (TLC); depth = ' +
    'states on the longest shortest path, initial state = 1 (TLC); behaviours = paths from an initial to ' +
    'a final state (seed: enumerated one by one; spec/: counted).',
);

let failed = false;
for (const row of rows) {
  for (const violation of row.exploration.violations) {
    failed = true;
    console.log(`\n${row.model}: ${formatViolation(violation, (state) => JSON.stringify(state))}`);
  }
  if (row.exploration.deadlocks > 0 || row.crossCheck.includes('DIFFERS')) failed = true;
  if (row.enumerated !== undefined && row.enumerated !== row.exploration.behaviours) failed = true;
}
if (failed) {
  console.log('\nFAILED');
  process.exitCode = 1;
} else {
  console.log('\nAll invariants and properties hold; no deadlocks; the independent recounts agree.');
}
