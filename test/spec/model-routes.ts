/**
 * `spec/TpxRoutes.tla` as an executable state machine: one caller's conversation through a transport
 * with routes — two upstreams, two routes (`*haiku*` → `[u1]`; anything else → `[u2, u1]`, the second a
 * fallback), a circuit breaker per upstream, one retry budget per exchange. Explored with `explore.ts`
 * and replayed against the real transport by `replay-routes.ts`.
 *
 * What it pins (the invariants and action properties at the end):
 *
 * - `RouteInv`: the route of an exchange is a pure function of the request (`Route(kind)`), and every
 *   attempt goes to a target of that route;
 * - `FallbackBeforeFirstByte`: once the first byte reached the caller, the upstream does not change;
 * - `BudgetInv`: attempts, retries and fallbacks together, are at most `MaxRetries + 1`;
 * - `TargetNotOpen`: no attempt is in flight on an upstream whose breaker is open;
 * - `PairingAcrossUpstreams`: the tool-result ids on the wire are the caller's, whichever upstream
 *   receives them and whichever emitted them;
 * - `SelectionStable`: the provider (`tpx`) never changes.
 *
 * @module
 */
import type { Machine } from './explore.js';
import { sameIds, subsets, type IdSet } from './model.js';

export type Upstream = 'u1' | 'u2';
export const UPSTREAMS: readonly Upstream[] = ['u1', 'u2'];
/** What the caller asks for: a model matching `*haiku*`, or another. */
export type Kind = 'haiku' | 'other';
export const KINDS: readonly Kind[] = ['haiku', 'other'];
export type RoutesMode = 'send' | 'stream';

/** `Route(kind)`: the targets of the route a request of that kind takes, in order. */
export function Route(kind: Kind): readonly Upstream[] {
  return kind === 'haiku' ? ['u1'] : ['u2', 'u1'];
}

export interface RoutesConstants {
  readonly maxTurns: number;
  readonly toolIds: readonly string[];
  readonly maxRetries: number;
  /** Consecutive failures that open a breaker. */
  readonly failures: number;
  readonly mode: RoutesMode;
}

/** The bounds of `spec/TpxRoutes.cfg`. */
export const ROUTES_CFG_CONSTANTS: RoutesConstants = {
  maxTurns: 2,
  toolIds: ['t1'],
  maxRetries: 1,
  failures: 1,
  mode: 'stream',
};

export interface Breaker {
  readonly state: 'closed' | 'open' | 'half-open';
  readonly count: number;
  /** A probe is in flight (half-open only). */
  readonly probing: boolean;
}

const CLOSED: Breaker = { state: 'closed', count: 0, probing: false };

export interface RoutesState {
  readonly turn: number;
  readonly phase: 'idle' | 'req' | 'resp';
  readonly kind: Kind | 'none';
  /** Position of the current target in `Route(kind)`; -1 when idle. */
  readonly index: number;
  readonly attempts: number;
  readonly delivered: boolean;
  readonly pending: IdSet;
  /** The upstream whose answer delivered `pending`. */
  readonly origin: Upstream | 'none';
  readonly reqIds: IdSet;
  readonly wireIds: IdSet;
  readonly breakers: Readonly<Record<Upstream, Breaker>>;
  readonly lastOutcome: 'none' | 'ok' | 'err';
}

export type RoutesActionName =
  | 'Init'
  | 'CallerSend'
  | 'NoTarget'
  | 'AttemptFail'
  | 'FirstByte'
  | 'StreamFail'
  | 'Deliver'
  | 'CoolDown'
  | 'Halted';

export type RoutesStep =
  | { action: 'Init'; param: null; state: RoutesState }
  | { action: 'CallerSend' | 'NoTarget'; param: { kind: Kind }; state: RoutesState }
  | { action: 'AttemptFail'; param: { failure: 'upstream' | 'other' }; state: RoutesState }
  | { action: 'Deliver'; param: { ids: IdSet }; state: RoutesState }
  | { action: 'FirstByte' | 'StreamFail' | 'CoolDown' | 'Halted'; param: null; state: RoutesState };

/** The target of the exchange in flight. */
export function target(state: RoutesState): Upstream | undefined {
  return state.kind === 'none' || state.index < 0 ? undefined : Route(state.kind)[state.index];
}

function withBreaker(state: RoutesState, upstream: Upstream, breaker: Breaker): RoutesState {
  return { ...state, breakers: { ...state.breakers, [upstream]: breaker } };
}

/** `Admit(b)`: whether an attempt may start on the upstream, and its breaker after admitting it. */
function admit(breaker: Breaker): Breaker | undefined {
  if (breaker.state === 'closed') return breaker;
  if (breaker.state === 'half-open' && !breaker.probing) return { ...breaker, probing: true };
  return undefined;
}

/** The breaker after an attempt's verdict. */
function verdict(constants: RoutesConstants, breaker: Breaker, failed: boolean): Breaker {
  if (!failed) return CLOSED;
  const count = breaker.count + 1;
  return breaker.probing || count >= constants.failures
    ? { state: 'open', count, probing: false }
    : { ...breaker, count, probing: false };
}

/** The exchange ends in an error: nothing pending any more, a turn counted. */
function endWithError(state: RoutesState): RoutesState {
  return {
    ...state,
    turn: state.turn + 1,
    phase: 'idle',
    kind: 'none',
    index: -1,
    attempts: 0,
    delivered: false,
    pending: [],
    origin: 'none',
    lastOutcome: 'err',
  };
}

/** Starts an attempt on the first target from `from` whose breaker admits it, if any. */
function beginFrom(state: RoutesState, kind: Kind, from: number): RoutesState | undefined {
  const chain = Route(kind);
  for (let index = from; index < chain.length; index++) {
    const upstream = chain[index]!;
    const admitted = admit(state.breakers[upstream]);
    if (admitted !== undefined) return { ...withBreaker(state, upstream, admitted), index };
  }
  return undefined;
}

export function Init(constants: RoutesConstants): RoutesStep[] {
  void constants;
  return [
    {
      action: 'Init',
      param: null,
      state: {
        turn: 0,
        phase: 'idle',
        kind: 'none',
        index: -1,
        attempts: 0,
        delivered: false,
        pending: [],
        origin: 'none',
        reqIds: [],
        wireIds: [],
        breakers: { u1: CLOSED, u2: CLOSED },
        lastOutcome: 'none',
      },
    },
  ];
}

/** The caller sends a request of either kind, answering every pending tool_use. */
function CallerSend(constants: RoutesConstants, s: RoutesState): RoutesStep[] {
  if (s.phase !== 'idle' || s.turn >= constants.maxTurns) return [];
  return KINDS.map((kind): RoutesStep => {
    const sent: RoutesState = {
      ...s,
      kind,
      attempts: 1,
      delivered: false,
      reqIds: s.pending,
      wireIds: s.pending,
    };
    const begun = beginFrom(sent, kind, 0);
    // Every target of the route is cooling down: 503 at once, nothing sent.
    if (begun === undefined) return { action: 'NoTarget', param: { kind }, state: endWithError(sent) };
    return { action: 'CallerSend', param: { kind }, state: { ...begun, phase: 'req' } };
  });
}

/**
 * The attempt fails before its first byte: an upstream failure (503, 429, connect, first-byte deadline)
 * counts against the breaker and may fall back; another failure (400) ends the exchange.
 */
function AttemptFail(constants: RoutesConstants, s: RoutesState): RoutesStep[] {
  if (s.phase !== 'req' || s.kind === 'none') return [];
  const upstream = target(s)!;
  const steps: RoutesStep[] = [];
  for (const failure of ['upstream', 'other'] as const) {
    const judged = withBreaker(s, upstream, verdict(constants, s.breakers[upstream], failure === 'upstream'));
    let next: RoutesState;
    if (failure === 'other') next = endWithError(judged);
    else {
      const chain = Route(s.kind);
      const switchTo = chain.findIndex(
        (candidate, index) => index > s.index && judged.breakers[candidate].state !== 'open',
      );
      const budgetLeft = s.attempts <= constants.maxRetries;
      if (switchTo !== -1) {
        const begun = budgetLeft ? beginFrom(judged, s.kind, switchTo) : undefined;
        next = begun === undefined ? endWithError(judged) : { ...begun, attempts: s.attempts + 1 };
      } else if (judged.breakers[upstream].state === 'open' || !budgetLeft) {
        next = endWithError(judged);
      } else {
        next = { ...judged, attempts: s.attempts + 1 };
      }
    }
    steps.push({ action: 'AttemptFail', param: { failure }, state: next });
  }
  return steps;
}

/** The first byte reaches the caller: the upstream is alive. */
function FirstByte(constants: RoutesConstants, s: RoutesState): RoutesStep[] {
  if (s.phase !== 'req') return [];
  const upstream = target(s)!;
  const judged = withBreaker(s, upstream, verdict(constants, s.breakers[upstream], false));
  return [{ action: 'FirstByte', param: null, state: { ...judged, phase: 'resp', delivered: true } }];
}

/** A stream breaks after its first byte: an error for the caller, never a fallback. */
function StreamFail(constants: RoutesConstants, s: RoutesState): RoutesStep[] {
  if (s.phase !== 'resp' || constants.mode !== 'stream') return [];
  return [{ action: 'StreamFail', param: null, state: endWithError(s) }];
}

/** The answer is delivered, with the tool calls the upstream made. */
function Deliver(constants: RoutesConstants, s: RoutesState): RoutesStep[] {
  if (s.phase !== 'resp') return [];
  return subsets(constants.toolIds).map((ids) => ({
    action: 'Deliver' as const,
    param: { ids },
    state: {
      ...s,
      turn: s.turn + 1,
      phase: 'idle' as const,
      kind: 'none' as const,
      index: -1,
      attempts: 0,
      delivered: false,
      pending: ids,
      origin: target(s)!,
      lastOutcome: 'ok' as const,
    },
  }));
}

/**
 * Between exchanges, the cool-down passes: every open breaker turns half-open (one probe may go). One
 * step for all, as time passes for all; breakers opened in one exchange share their cool-down's end
 * closely enough that no request can fall between them.
 */
function CoolDown(constants: RoutesConstants, s: RoutesState): RoutesStep[] {
  if (s.phase !== 'idle' || s.turn >= constants.maxTurns) return [];
  if (!UPSTREAMS.some((upstream) => s.breakers[upstream].state === 'open')) return [];
  let cooled = s;
  for (const upstream of UPSTREAMS) {
    if (s.breakers[upstream].state === 'open') {
      cooled = withBreaker(cooled, upstream, { ...s.breakers[upstream], state: 'half-open' });
    }
  }
  return [{ action: 'CoolDown', param: null, state: cooled }];
}

function Halted(constants: RoutesConstants, s: RoutesState): RoutesStep[] {
  return s.phase === 'idle' && s.turn >= constants.maxTurns
    ? [{ action: 'Halted', param: null, state: s }]
    : [];
}

const ACTIONS = [CallerSend, AttemptFail, FirstByte, StreamFail, Deliver, CoolDown, Halted];

export function nextRoutes(constants: RoutesConstants, s: RoutesState): RoutesStep[] {
  return ACTIONS.flatMap((action) => action(constants, s));
}

export function routesKey(s: RoutesState): string {
  const breaker = (b: Breaker) => `${b.state}${b.count}${b.probing ? 'p' : ''}`;
  return [
    s.turn,
    s.phase,
    s.kind,
    s.index,
    s.attempts,
    s.delivered ? 'D' : 'd',
    s.pending.join('+'),
    s.origin,
    s.reqIds.join('+'),
    s.wireIds.join('+'),
    breaker(s.breakers.u1),
    breaker(s.breakers.u2),
    s.lastOutcome,
  ].join('|');
}

export const RoutesInvariants = {
  RouteInv: (_c: RoutesConstants, s: RoutesState) =>
    s.phase === 'idle' ? s.kind === 'none' : s.kind !== 'none' && target(s) === Route(s.kind)[s.index],
  BudgetInv: (c: RoutesConstants, s: RoutesState) => s.attempts <= c.maxRetries + 1,
  TargetNotOpen: (_c: RoutesConstants, s: RoutesState) =>
    s.phase !== 'req' || s.breakers[target(s)!].state !== 'open',
  PairingAcrossUpstreams: (_c: RoutesConstants, s: RoutesState) =>
    s.phase === 'idle' || sameIds(s.wireIds, s.reqIds),
} as const;

export const RoutesProperties = {
  /** Once anything reached the caller, the attempt in flight is the last one: no other upstream is tried. */
  FallbackBeforeFirstByte: (_c: RoutesConstants, from: RoutesState, to: RoutesState) =>
    !from.delivered || to.phase === 'idle' || (to.index === from.index && to.attempts === from.attempts),
  /** A new attempt starts only on an upstream whose breaker admitted it (never on an open one). */
  AttemptsOnlyWhereAdmitted: (_c: RoutesConstants, from: RoutesState, to: RoutesState) => {
    const starts = to.phase === 'req' && (from.phase === 'idle' || to.attempts !== from.attempts);
    return !starts || to.breakers[target(to)!].state !== 'open';
  },
} as const;

/** The machine `explore.ts` checks, optionally with a broken action for the negative tests. */
export function routesMachine(
  variant: { next?: (constants: RoutesConstants, s: RoutesState) => RoutesStep[] } = {},
): Machine<RoutesState, RoutesConstants, RoutesStep> {
  return {
    name: 'TpxRoutes',
    init: Init,
    next: variant.next ?? nextRoutes,
    key: routesKey,
    invariants: Object.entries(RoutesInvariants).map(([name, holds]) => ({ name, holds })),
    actionProperties: Object.entries(RoutesProperties).map(([name, holds]) => ({ name, holds })),
  };
}
