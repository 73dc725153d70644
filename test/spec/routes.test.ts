/**
 * The routes model (`spec/TpxRoutes.tla`, executable in `model-routes.ts`): explored exhaustively at the
 * `.cfg` bounds and a larger one with every invariant checked, shown to catch broken variants, and every
 * behaviour at the `.cfg` bounds replayed against the real transport over loopback (`replay-routes.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enumerateBehaviours, explore } from './explore.js';
import {
  ROUTES_CFG_CONSTANTS,
  Route,
  nextRoutes,
  routesMachine,
  type RoutesConstants,
  type RoutesState,
  type RoutesStep,
} from './model-routes.js';
import { replayRoutesBehaviour, startRoutesUpstreams } from './replay-routes.js';

const LARGER: RoutesConstants = {
  maxTurns: 3,
  toolIds: ['t1', 't2'],
  maxRetries: 2,
  failures: 2,
  mode: 'stream',
};

describe('the routes model, explored', () => {
  it.each([
    ['.cfg, stream', ROUTES_CFG_CONSTANTS, 133, 298, 10, 244],
    ['.cfg, send', { ...ROUTES_CFG_CONSTANTS, mode: 'send' as const }, 133, 266, 10, 152],
    ['larger, stream', LARGER, 784, 2228, 13, 36254],
  ])('%s: every invariant holds, no deadlock', (_name, constants, states, transitions, depth, behaviours) => {
    const result = explore(routesMachine(), constants);
    expect(result.violations).toEqual([]);
    expect(result.deadlocks).toBe(0);
    expect([result.distinctStates, result.transitions, result.depth, result.behaviours]).toEqual([
      states,
      transitions,
      depth,
      behaviours,
    ]);
  });

  function violated(next: (constants: RoutesConstants, s: RoutesState) => RoutesStep[]): string[] {
    return explore(routesMachine({ next }), ROUTES_CFG_CONSTANTS).violations.map(
      (violation) => violation.property,
    );
  }

  it('catches a fallback after the first byte', () => {
    const next = (constants: RoutesConstants, s: RoutesState): RoutesStep[] => {
      const steps = nextRoutes(constants, s);
      if (s.phase !== 'resp' || s.kind === 'none' || s.index + 1 >= Route(s.kind).length) return steps;
      const moved: RoutesState = { ...s, phase: 'req', index: s.index + 1, attempts: s.attempts + 1 };
      return [...steps, { action: 'StreamFail', param: null, state: moved }];
    };
    expect(violated(next)).toContain('FallbackBeforeFirstByte');
  });

  it('catches an attempt on an upstream whose breaker is open', () => {
    const next = (constants: RoutesConstants, s: RoutesState): RoutesStep[] =>
      nextRoutes(constants, s).map((step) =>
        step.action === 'NoTarget'
          ? {
              action: 'CallerSend',
              param: step.param,
              state: { ...s, phase: 'req', kind: step.param.kind, index: 0, attempts: 1 },
            }
          : step,
      );
    expect(violated(next)).toEqual(expect.arrayContaining(['TargetNotOpen', 'AttemptsOnlyWhereAdmitted']));
  });

  it('catches fallbacks that do not spend the retry budget', () => {
    const next = (constants: RoutesConstants, s: RoutesState): RoutesStep[] => {
      const steps = nextRoutes(constants, s);
      // One attempt past the budget is enough to show; more would never end.
      if (s.phase !== 'req' || s.attempts > constants.maxRetries + 1) return steps;
      return [
        ...steps,
        { action: 'AttemptFail', param: { failure: 'upstream' }, state: { ...s, attempts: s.attempts + 1 } },
      ];
    };
    expect(violated(next)).toContain('BudgetInv');
  });

  it('catches wire ids that depend on the upstream', () => {
    const next = (constants: RoutesConstants, s: RoutesState): RoutesStep[] =>
      nextRoutes(constants, s).map((step) =>
        step.action === 'CallerSend' && s.origin !== 'none' && s.origin !== Route(step.param.kind)[0]
          ? { ...step, state: { ...step.state, wireIds: [] } }
          : step,
      );
    expect(violated(next)).toContain('PairingAcrossUpstreams');
  });
});

describe('the routes model, replayed against the real transport', () => {
  let upstreams: Awaited<ReturnType<typeof startRoutesUpstreams>>;
  beforeAll(async () => {
    upstreams = await startRoutesUpstreams();
  });
  afterAll(async () => {
    await upstreams.close();
  });

  it.each([
    ['stream', ROUTES_CFG_CONSTANTS, 244],
    ['send', { ...ROUTES_CFG_CONSTANTS, mode: 'send' as const }, 152],
  ])(
    'replays every %s behaviour at the .cfg bounds without a divergence',
    { timeout: 120_000 },
    async (_mode, constants, count) => {
      let replayed = 0;
      for (const behaviour of enumerateBehaviours(routesMachine(), constants)) {
        upstreams.queues.u1.length = 0;
        upstreams.queues.u2.length = 0;
        try {
          await replayRoutesBehaviour(constants, upstreams, behaviour);
        } catch (error) {
          const trace = behaviour.map(
            (step) => `${step.action}${step.param === null ? '' : JSON.stringify(step.param)}`,
          );
          throw new Error(`behaviour ${replayed}: ${trace.join(' → ')}\n${(error as Error).message}`, {
            cause: error,
          });
        }
        replayed++;
      }
      expect(replayed).toBe(count);
    },
  );
});
