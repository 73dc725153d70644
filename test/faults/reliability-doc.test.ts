/**
 * `docs/reliability.md` is generated from the fault suite's observations (`TPX_WRITE_RELIABILITY=1`).
 * This keeps it in step with the table of modes: every mode is in it, for every provider it applies to,
 * and every cell says what the suite observes. The fault suite asserts that each run's cell is the one
 * its expectation stands for (`formatExpected`), so comparing each cell here with that expectation
 * compares it with what the suite observed, without depending on the order test files run in.
 *
 * The observed outcomes are grouped: modes with the same four outcomes share a row, and a row for `both`
 * providers stands for the two when they agree, which keeps the page short as modes are added.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatExpected, hostileCaseCells } from './fault-harness.js';
import { FAULT_MODES, appliesTo } from './fault-modes.js';
import { HOSTILE_CASES } from './hostile-cases.js';

const report = readFileSync(new URL('../../docs/reliability.md', import.meta.url), 'utf8');

/** The cells of every table row of `markdown`, trimmed. */
function tableRows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

const rows = tableRows(report);

/** One row of the observed outcomes: the modes it names, its provider (or `both`), and its four cells. */
interface OutcomeRow {
  modes: string[];
  provider: string;
  cells: string[];
}

const outcomesSection = report.split('## Observed outcomes')[1]?.split('\n## ')[0] ?? '';
const outcomeRows: OutcomeRow[] = tableRows(outcomesSection)
  .slice(2) // the header and its rule
  .map((cells) => ({
    modes: [...(cells[0] ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1]!),
    provider: cells[1] ?? '',
    cells: cells.slice(2),
  }));

/** The rows that hold `mode`'s outcomes for `provider`: its own, or one for both providers. */
function rowsFor(mode: string, provider: 'anthropic' | 'tpx'): OutcomeRow[] {
  return outcomeRows.filter(
    (row) => row.modes.includes(mode) && (row.provider === provider || row.provider === 'both'),
  );
}

describe('docs/reliability.md', () => {
  it('lists every fault mode with its observed outcome for each provider it applies to', () => {
    expect(report).toContain(`${FAULT_MODES.length} modes`);
    for (const mode of FAULT_MODES) {
      for (const provider of ['anthropic', 'tpx'] as const) {
        const found = rowsFor(mode.name, provider);
        if (!appliesTo(mode, provider)) {
          expect(found, `${mode.name} / ${provider}`).toEqual([]);
          continue;
        }
        expect(found, `${mode.name} / ${provider}: regenerate with TPX_WRITE_RELIABILITY=1`).toHaveLength(1);
        // One cell per entry point: library send and stream, proxy JSON and SSE.
        expect(found[0]!.cells).toHaveLength(4);
        for (const cell of found[0]!.cells) expect(cell).not.toMatch(/^$|not run|BROKEN/);
      }
    }
  });

  it('says in every cell what the fault suite observes for that mode, provider and entry point', () => {
    const columns = [
      { entry: 'send', via: 'library' },
      { entry: 'stream', via: 'library' },
      { entry: 'send', via: 'proxy' },
      { entry: 'stream', via: 'proxy' },
    ] as const;
    let compared = 0;
    for (const mode of FAULT_MODES) {
      for (const provider of ['anthropic', 'tpx'] as const) {
        if (!appliesTo(mode, provider)) continue;
        const row = rowsFor(mode.name, provider)[0];
        columns.forEach(({ entry, via }, index) => {
          const expected = formatExpected(mode, provider, entry, via).replace(/\|/g, '\\|');
          expect(row?.cells[index], `${mode.name} / ${provider} / ${via} ${entry}`).toBe(expected);
          compared++;
        });
      }
    }
    expect(compared).toBeGreaterThanOrEqual(FAULT_MODES.length * columns.length);
  });

  it('gives each outcome one row, and names both providers only for modes that run on both', () => {
    const outcomes = outcomeRows.map((row) => JSON.stringify([row.provider, row.cells]));
    expect(new Set(outcomes).size).toBe(outcomes.length);
    for (const row of outcomeRows.filter((candidate) => candidate.provider === 'both')) {
      for (const name of row.modes) {
        const mode = FAULT_MODES.find((candidate) => candidate.name === name);
        expect(mode, name).toBeDefined();
        expect(appliesTo(mode!, 'anthropic') && appliesTo(mode!, 'tpx'), name).toBe(true);
      }
    }
  });

  it('lists every hostile case with its outcome and a test that exists in the file it names', () => {
    for (const hostileCase of HOSTILE_CASES) {
      const expected = hostileCaseCells(hostileCase);
      const row = rows.find((cells) => cells[1] === expected[1]);
      expect(row, `${hostileCase.input}: regenerate with TPX_WRITE_RELIABILITY=1`).toEqual(expected);
      const source = readFileSync(new URL(`../../${hostileCase.test.file}`, import.meta.url), 'utf8');
      expect(source, `${hostileCase.test.file} has no test titled …${hostileCase.test.title}…`).toContain(
        hostileCase.test.title,
      );
    }
  });
});
