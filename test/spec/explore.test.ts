import { describe, expect, it } from 'vitest';
import { enumerateBehaviours, explore, type Machine, type StepLike, type Violation } from './explore.js';
import {
  ACTION_NAMES,
  CFG_CONSTANTS,
  Deliver,
  Init,
  LARGER_CONSTANTS,
  NoProvider,
  SEED_ACTIONS,
  Select,
  next,
  seedMachine,
  stateKey,
  type Constants,
  type State,
  type Step,
} from './model.js';
import {
  EXTENDED_CFG_CONSTANTS,
  extendedMachine,
  project,
  type ExtendedConstants,
  type ExtendedState,
  type ExtendedStep,
} from './model-extended.js';
import { closedForm, packSeedState, recountDepthFirst } from './recount.js';

const SEED_VARIABLES = [
  'hasKey',
  'hasToken',
  'provider',
  'turn',
  'phase',
  'pending',
  'reqIds',
  'wireShape',
  'wireIds',
  'emitted',
  'gotShape',
  'lastOutcome',
];

/** A counterexample must be a real path of the machine that ends where the property fails. */
function expectCounterexample<S, C, St extends StepLike<S>>(
  machine: Machine<S, C, St>,
  constants: C,
  violation: Violation<St> | undefined,
): void {
  expect(violation).toBeDefined();
  const trace = violation!.trace;
  expect(trace.length).toBeGreaterThan(0);
  expect(trace[0]!.action).toBe('Init');
  expect(machine.init(constants).map((step) => machine.key(step.state))).toContain(
    machine.key(trace[0]!.state),
  );
  for (let index = 1; index < trace.length; index++) {
    const successors = machine
      .next(constants, trace[index - 1]!.state)
      .map((step) => machine.key(step.state));
    expect(successors).toContain(machine.key(trace[index]!.state));
  }
  const last = trace[trace.length - 1]!.state;
  switch (violation!.kind) {
    case 'invariant': {
      const invariant = machine.invariants.find((candidate) => candidate.name === violation!.property)!;
      expect(invariant.holds(constants, last)).toBe(false);
      break;
    }
    case 'action-property': {
      const property = machine.actionProperties.find((candidate) => candidate.name === violation!.property)!;
      expect(property.holds(constants, trace[trace.length - 2]!.state, last)).toBe(false);
      break;
    }
    case 'deadlock':
      expect(machine.next(constants, last)).toEqual([]);
      break;
  }
}

function violationOf<St>(violations: readonly Violation<St>[], property: string): Violation<St> | undefined {
  return violations.find((violation) => violation.property === property);
}

describe('the seed model at the .cfg bounds (MaxTurns=3, ToolIds={t1,t2})', () => {
  const exploration = explore(seedMachine(), CFG_CONSTANTS);

  it('keeps every invariant and SelectionStable, and never deadlocks', () => {
    expect(exploration.violations).toEqual([]);
    expect(exploration.deadlocks).toBe(0);
  });

  it('reports the counts TLC would report', () => {
    expect(exploration).toMatchObject({
      initialStates: 4,
      distinctStates: 361,
      transitions: 574,
      selfLoops: 97,
      statesGenerated: 578,
      depth: 9,
      finalStates: 97,
      behaviours: 466,
    });
  });

  it('agrees with the depth-first recount over packed states, state for state', () => {
    const recount = recountDepthFirst(CFG_CONSTANTS.maxTurns, CFG_CONSTANTS.toolIds.length);
    expect(recount).toMatchObject({
      distinctStates: exploration.distinctStates,
      transitions: exploration.transitions,
      selfLoops: exploration.selfLoops,
      deadlocks: exploration.deadlocks,
      finalStates: exploration.finalStates,
      behaviours: exploration.behaviours,
    });
    const packed = new Set<number>();
    explore(seedMachine(), CFG_CONSTANTS, {
      onTransition: (_from, step) =>
        packed.add(packSeedState(CFG_CONSTANTS.maxTurns, CFG_CONSTANTS.toolIds, step.state)),
    });
    for (const state of seedMachine().init(CFG_CONSTANTS)) {
      packed.add(packSeedState(CFG_CONSTANTS.maxTurns, CFG_CONSTANTS.toolIds, state.state));
    }
    expect([...packed].sort((a, b) => a - b)).toEqual([...recount.codes].sort((a, b) => a - b));
  });

  it('never reaches one state by two labelled transitions from the same state, so transitions are edges', () => {
    const edges = new Set<string>();
    explore(seedMachine(), CFG_CONSTANTS, {
      onTransition: (from, step) => edges.add(`${stateKey(from)} -> ${stateKey(step.state)}`),
    });
    expect(edges.size).toBe(exploration.transitions);
  });

  it('agrees with the hand-derived closed form', () => {
    expect(closedForm(3, 2)).toEqual({
      distinctStates: exploration.distinctStates,
      transitions: exploration.transitions,
      statesGenerated: exploration.statesGenerated,
      depth: exploration.depth,
      deadlocks: 0,
      behaviours: exploration.behaviours,
    });
  });
});

describe('the counting methods agree for other bounds', () => {
  it('at MaxTurns=4, ToolIds={t1,t2,t3}', () => {
    const exploration = explore(seedMachine(), LARGER_CONSTANTS);
    const recount = recountDepthFirst(4, 3);
    expect(exploration).toMatchObject({
      distinctStates: 1838,
      transitions: 3203,
      depth: 11,
      behaviours: 24934,
    });
    expect(exploration.violations).toEqual([]);
    expect(recount).toMatchObject({
      distinctStates: 1838,
      transitions: 3203,
      selfLoops: exploration.selfLoops,
      deadlocks: 0,
      behaviours: 24934,
    });
    expect(closedForm(4, 3)).toMatchObject({
      distinctStates: 1838,
      transitions: 3203,
      depth: 11,
      behaviours: 24934,
    });
  });

  it('for every MaxTurns in 0..5 and every |ToolIds| in 0..3', () => {
    for (let maxTurns = 0; maxTurns <= 5; maxTurns++) {
      for (let toolCount = 0; toolCount <= 3; toolCount++) {
        const constants: Constants = {
          maxTurns,
          toolIds: Array.from({ length: toolCount }, (_, i) => `t${i + 1}`),
        };
        const exploration = explore(seedMachine(), constants);
        const recount = recountDepthFirst(maxTurns, toolCount);
        const formula = closedForm(maxTurns, toolCount);
        const bounds = `MaxTurns=${maxTurns} |ToolIds|=${toolCount}`;
        expect(exploration.violations, bounds).toEqual([]);
        expect(
          [recount.distinctStates, recount.transitions, recount.deadlocks, recount.behaviours],
          `${bounds}: recount`,
        ).toEqual([
          exploration.distinctStates,
          exploration.transitions,
          exploration.deadlocks,
          exploration.behaviours,
        ]);
        expect(formula, `${bounds}: closed form`).toEqual({
          distinctStates: exploration.distinctStates,
          transitions: exploration.transitions,
          statesGenerated: exploration.statesGenerated,
          depth: exploration.depth,
          deadlocks: exploration.deadlocks,
          behaviours: exploration.behaviours,
        });
      }
    }
  });
});

describe('the state key', () => {
  const sample: State = {
    hasKey: false,
    hasToken: true,
    provider: 'TPX',
    turn: 1,
    phase: 'req',
    pending: ['t1'],
    reqIds: ['t1'],
    wireShape: 'openai',
    wireIds: ['t1'],
    emitted: ['t1'],
    gotShape: 'messages',
    lastOutcome: 'ok',
  };

  it('has exactly the seed variables, in the order of vars', () => {
    expect(Object.keys(Init(CFG_CONSTANTS)[0]!.state)).toEqual(SEED_VARIABLES);
    expect(Object.keys(sample)).toEqual(SEED_VARIABLES);
  });

  it('changes when any single variable changes', () => {
    const changed: State[] = [
      { ...sample, hasKey: true },
      { ...sample, hasToken: false },
      { ...sample, provider: 'ANTHROPIC' },
      { ...sample, turn: 2 },
      { ...sample, phase: 'resp' },
      { ...sample, pending: [] },
      { ...sample, reqIds: ['t1', 't2'] },
      { ...sample, wireShape: 'messages' },
      { ...sample, wireIds: ['t2'] },
      { ...sample, emitted: [] },
      { ...sample, gotShape: 'openai' },
      { ...sample, lastOutcome: 'err' },
    ];
    const keys = new Set([stateKey(sample), ...changed.map(stateKey)]);
    expect(keys.size).toBe(13);
  });

  it('is caught by the recount when it forgets a variable (dedupes too much)', () => {
    const lossy = { ...seedMachine(), key: (s: State) => stateKey({ ...s, emitted: [] }) };
    expect(explore(lossy, CFG_CONSTANTS).distinctStates).toBeLessThan(recountDepthFirst(3, 2).distinctStates);
  });

  it('is caught by the recount and TypeOK when sets keep their emission order (dedupes too little)', () => {
    // The provider may emit {t1,t2} as [t1,t2] or as [t2,t1]: kept as lists, one set becomes two states.
    const unsorted = seedMachine({
      actions: {
        ProviderReply: (constants, s) =>
          SEED_ACTIONS.ProviderReply(constants, s).flatMap((step): Step[] => {
            if (step.action !== 'ProviderReply' || step.param.ids.length < 2) return [step];
            const ids = [...step.param.ids].reverse();
            return [step, { ...step, param: { ids }, state: { ...step.state, emitted: ids, wireIds: ids } }];
          }),
      },
    });
    const exploration = explore(unsorted, CFG_CONSTANTS);
    expect(exploration.distinctStates).toBeGreaterThan(recountDepthFirst(3, 2).distinctStates);
    expectCounterexample(unsorted, CFG_CONSTANTS, violationOf(exploration.violations, 'TypeOK'));
  });
});

describe('behaviours, for replay', () => {
  const all = [...enumerateBehaviours(seedMachine(), CFG_CONSTANTS)];

  it('enumerates every maximal behaviour once: 466 at the .cfg bounds', () => {
    expect(all).toHaveLength(466);
    const distinct = new Set(
      all.map((behaviour) => behaviour.map((step) => `${step.action}:${stateKey(step.state)}`).join(' ')),
    );
    expect(distinct.size).toBe(466);
  });

  it('starts each behaviour with its Init choice and ends it in a state where only Halted is enabled', () => {
    for (const behaviour of all) {
      const first = behaviour[0]!;
      expect(first.action).toBe('Init');
      if (first.action === 'Init')
        expect(first.param).toEqual({ hasKey: first.state.hasKey, hasToken: first.state.hasToken });
      const last = behaviour[behaviour.length - 1]!.state;
      expect(next(CFG_CONSTANTS, last).map((step) => step.action)).toEqual(['Halted']);
      expect(last.turn).toBe(CFG_CONSTANTS.maxTurns);
    }
  });

  it('names each step precisely enough to redo it: the named action with the named choice gives the same state', () => {
    for (const behaviour of all) {
      for (let index = 1; index < behaviour.length; index++) {
        const step = behaviour[index]!;
        expect(step.action).not.toBe('Init');
        if (step.action === 'Init') continue;
        const redone = SEED_ACTIONS[step.action](CFG_CONSTANTS, behaviour[index - 1]!.state).filter(
          (candidate) => JSON.stringify(candidate.param) === JSON.stringify(step.param),
        );
        expect(redone).toHaveLength(1);
        expect(stateKey(redone[0]!.state)).toBe(stateKey(step.state));
      }
    }
  });

  it('covers every action of Next except the final stutter', () => {
    const used = new Set(all.flatMap((behaviour) => behaviour.map((step) => step.action)));
    expect([...used].sort()).toEqual([...ACTION_NAMES.filter((name) => name !== 'Halted'), 'Init'].sort());
  });
});

describe('broken variants of the seed are caught, each with a counterexample', () => {
  it('a Deliver that drops one of the emitted ids violates PairingInv', () => {
    const machine = seedMachine({
      actions: {
        Deliver: (constants, s) =>
          Deliver(constants, s).map((step) => ({
            ...step,
            state: { ...step.state, pending: step.state.pending.slice(1) },
          })),
      },
    });
    const { violations } = explore(machine, CFG_CONSTANTS);
    expectCounterexample(machine, CFG_CONSTANTS, violationOf(violations, 'PairingInv'));
  });

  it('a CallerSend that puts the previous request ids on the wire violates PairingInv', () => {
    const machine = seedMachine({
      actions: {
        CallerSend: (constants, s) =>
          SEED_ACTIONS.CallerSend(constants, s).map((step) => ({
            ...step,
            state: { ...step.state, wireIds: s.reqIds },
          })),
      },
    });
    const { violations } = explore(machine, CFG_CONSTANTS);
    expectCounterexample(machine, CFG_CONSTANTS, violationOf(violations, 'PairingInv'));
  });

  it('a selection that prefers the token when key and token are both present violates SelectionInv', () => {
    const machine = seedMachine({
      init: (constants) =>
        Init(constants).map((step) =>
          step.state.hasKey && step.state.hasToken
            ? { ...step, state: { ...step.state, provider: 'TPX' } }
            : step,
        ),
    });
    const violation = violationOf(explore(machine, CFG_CONSTANTS).violations, 'SelectionInv');
    expectCounterexample(machine, CFG_CONSTANTS, violation);
    expect(violation!.trace).toHaveLength(1);
  });

  it('a Deliver that hands the caller the provider’s own shape violates ShapeInv', () => {
    const machine = seedMachine({
      actions: {
        Deliver: (constants, s) =>
          Deliver(constants, s).map((step) => ({ ...step, state: { ...step.state, gotShape: s.wireShape } })),
      },
    });
    const violation = violationOf(explore(machine, CFG_CONSTANTS).violations, 'ShapeInv');
    expectCounterexample(machine, CFG_CONSTANTS, violation);
    expect(violation!.trace[0]!.state.provider).toBe('TPX');
  });

  it('a CallerAbort that forgets the key (re-selecting consistently) violates SelectionStable only', () => {
    const machine = seedMachine({
      actions: {
        CallerAbort: (constants, s) =>
          SEED_ACTIONS.CallerAbort(constants, s).map((step) => ({
            ...step,
            state: { ...step.state, hasKey: false, provider: Select(false, s.hasToken) },
          })),
      },
    });
    const { violations } = explore(machine, CFG_CONSTANTS);
    expect(violations.map((violation) => violation.property)).toEqual(['SelectionStable']);
    expectCounterexample(machine, CFG_CONSTANTS, violations[0]);
  });

  it('without Halted, every final state is a deadlock', () => {
    const machine = seedMachine({ actions: { Halted: () => [] } });
    const exploration = explore(machine, CFG_CONSTANTS);
    expect(exploration.deadlocks).toBe(97);
    expectCounterexample(machine, CFG_CONSTANTS, violationOf(exploration.violations, 'Deadlock'));
  });

  it('a NoProvider that stops one turn early deadlocks the credential-less boot', () => {
    const machine = seedMachine({
      actions: {
        NoProvider: (constants, s) => (s.turn + 1 < constants.maxTurns ? NoProvider(constants, s) : []),
      },
    });
    const exploration = explore(machine, CFG_CONSTANTS);
    const violation = violationOf(exploration.violations, 'Deadlock');
    expectCounterexample(machine, CFG_CONSTANTS, violation);
    expect(violation!.trace[violation!.trace.length - 1]!.state).toMatchObject({ provider: 'NONE', turn: 2 });
  });
});

describe('our specification (spec/TpxTransport.tla) as an executable model', () => {
  const machine = extendedMachine();
  const constants = EXTENDED_CFG_CONSTANTS;

  it('keeps every invariant and property at the spec/ .cfg bounds, and never deadlocks', () => {
    const exploration = explore(machine, constants);
    expect(exploration.violations).toEqual([]);
    expect(exploration).toMatchObject({ distinctStates: 3895, transitions: 11527, depth: 13, deadlocks: 0 });
  });

  it('projects onto the seed: every step is a seed step or a seed stutter, except StreamFail', () => {
    const notInSeed = new Set<string>();
    explore(machine, constants, {
      onTransition(from, step) {
        const before = project(from);
        const after = stateKey(project(step.state));
        const seedSuccessors = next(constants, before).map((successor) => stateKey(successor.state));
        if (after !== stateKey(before) && !seedSuccessors.includes(after)) notInSeed.add(step.action);
      },
    });
    expect([...notInSeed]).toEqual(['StreamFail']);
  });

  it('catches a retry that re-sends a body rebuilt without the tool results (PairingInv, RetryKeepsBody)', () => {
    const broken = extendedMachine({
      ProviderRetry: (c, s) =>
        s.phase === 'req' && s.attempts <= c.maxRetries
          ? [{ action: 'ProviderRetry', param: null, state: { ...s, attempts: s.attempts + 1, wireIds: [] } }]
          : [],
    });
    const { violations } = explore(broken, constants);
    expectCounterexample(broken, constants, violationOf(violations, 'PairingInv'));
    expectCounterexample(broken, constants, violationOf(violations, 'RetryKeepsBody'));
  });

  it('catches a retry after part of a stream was delivered (NoReplayInv)', () => {
    const broken = extendedMachine({
      StreamFail: (c, s): ExtendedStep[] =>
        s.phase === 'resp' && s.mode === 'stream' && s.chunks > 0 && s.attempts <= c.maxRetries
          ? [
              {
                action: 'StreamFail',
                param: null,
                state: { ...s, phase: 'req', wireIds: s.reqIds, attempts: s.attempts + 1 },
              },
            ]
          : [],
    });
    const { violations } = explore(broken, constants);
    expectCounterexample<ExtendedState, ExtendedConstants, ExtendedStep>(
      broken,
      constants,
      violationOf(violations, 'NoReplayInv'),
    );
  });

  it('catches a stream whose first event is never delivered (a deadlock)', () => {
    const broken = extendedMachine({
      StreamChunk: (c, s) =>
        s.phase === 'resp' && s.mode === 'stream' && s.chunks > 0 && s.chunks < c.maxChunks
          ? [{ action: 'StreamChunk', param: null, state: { ...s, chunks: s.chunks + 1 } }]
          : [],
    });
    const exploration = explore(broken, constants);
    const violation = violationOf(exploration.violations, 'Deadlock');
    expectCounterexample(broken, constants, violation);
    expect(violation!.trace[violation!.trace.length - 1]!.state).toMatchObject({
      phase: 'resp',
      mode: 'stream',
      chunks: 0,
    });
  });
});
