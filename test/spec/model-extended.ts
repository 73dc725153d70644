/**
 * Our specification, `spec/TpxTransport.tla`, as an executable state machine: the seed's twelve
 * variables plus `mode`, `attempts` and `chunks`, the seed's actions (each lifted from `model.ts`, so the
 * two cannot drift apart) and the new ones (`CallerMispair`, `CallerCancel`, `ProviderRetry`,
 * `StreamChunk`, `StreamFail`). No TLA+ model checker runs here; exploring this machine with
 * `explore.ts` stands in for running TLC on `spec/TpxTransport.cfg`.
 *
 * @module
 */
import type { Machine } from './explore.js';
import {
  CallerAbort,
  CallerSend,
  Deliver,
  Halted,
  Init,
  NoProvider,
  ProviderFail,
  ProviderReply,
  SEED_INVARIANTS,
  SelectionStable,
  sameIds,
  stateKey,
  subsets,
  type Constants,
  type IdSet,
  type State,
  type Step,
} from './model.js';

export type Mode = 'send' | 'stream';
export const MODES: readonly Mode[] = ['send', 'stream'];

/** `MaxTurns`, `ToolIds`, `MaxRetries`, `MaxChunks`. */
export interface ExtendedConstants extends Constants {
  readonly maxRetries: number;
  readonly maxChunks: number;
}

/** The bounds of `spec/TpxTransport.cfg`. */
export const EXTENDED_CFG_CONSTANTS: ExtendedConstants = {
  maxTurns: 3,
  toolIds: ['t1', 't2'],
  maxRetries: 2,
  maxChunks: 2,
};

export interface ExtendedState extends State {
  readonly mode: Mode;
  readonly attempts: number;
  readonly chunks: number;
}

export type ExtendedActionName =
  | 'CallerSend'
  | 'CallerMispair'
  | 'CallerAbort'
  | 'CallerCancel'
  | 'NoProvider'
  | 'ProviderRetry'
  | 'ProviderReply'
  | 'ProviderFail'
  | 'StreamChunk'
  | 'StreamFail'
  | 'Deliver'
  | 'Halted';

export type ExtendedStep =
  | {
      readonly action: 'Init';
      readonly param: { readonly hasKey: boolean; readonly hasToken: boolean };
      readonly state: ExtendedState;
    }
  | { readonly action: 'CallerSend'; readonly param: { readonly mode: Mode }; readonly state: ExtendedState }
  | {
      readonly action: 'ProviderReply' | 'CallerMispair';
      readonly param: { readonly ids: IdSet };
      readonly state: ExtendedState;
    }
  | {
      readonly action: Exclude<ExtendedActionName, 'CallerSend' | 'ProviderReply' | 'CallerMispair'>;
      readonly param: null;
      readonly state: ExtendedState;
    };

type ExtendedAction = (constants: ExtendedConstants, state: ExtendedState) => ExtendedStep[];

/** The seed part of a state. */
export function project(s: State): State {
  return {
    hasKey: s.hasKey,
    hasToken: s.hasToken,
    provider: s.provider,
    turn: s.turn,
    phase: s.phase,
    pending: s.pending,
    reqIds: s.reqIds,
    wireShape: s.wireShape,
    wireIds: s.wireIds,
    emitted: s.emitted,
    gotShape: s.gotShape,
    lastOutcome: s.lastOutcome,
  };
}

function withExchange(
  seed: State,
  exchange: Pick<ExtendedState, 'mode' | 'attempts' | 'chunks'>,
): ExtendedState {
  return { ...project(seed), mode: exchange.mode, attempts: exchange.attempts, chunks: exchange.chunks };
}

/** A seed action with `ExchangeUnchanged`: the new variables keep their values. */
function lifted(
  seedAction: (constants: Constants, state: State) => Step[],
  guard: (state: ExtendedState) => boolean = () => true,
): ExtendedAction {
  return (constants, s) => {
    if (!guard(s)) return [];
    return seedAction(constants, project(s)).map((step): ExtendedStep => {
      const state = withExchange(step.state, s);
      switch (step.action) {
        case 'ProviderReply':
          return { action: 'ProviderReply', param: step.param, state };
        case 'Init':
        case 'CallerSend':
          throw new Error(`${step.action} is not lifted unchanged`);
        case 'CallerAbort':
        case 'NoProvider':
        case 'ProviderFail':
        case 'Deliver':
        case 'Halted':
          return { action: step.action, param: null, state };
      }
    });
  };
}

export function ExtendedInit(constants: ExtendedConstants): ExtendedStep[] {
  return Init(constants).map((step) => ({
    action: 'Init',
    param: { hasKey: step.state.hasKey, hasToken: step.state.hasToken },
    state: withExchange(step.state, { mode: 'send', attempts: 0, chunks: 0 }),
  }));
}

const ExtendedCallerSend: ExtendedAction = (constants, s) =>
  CallerSend(constants, project(s)).flatMap((step) =>
    MODES.map((mode) => ({
      action: 'CallerSend' as const,
      param: { mode },
      state: withExchange(step.state, { mode, attempts: 1, chunks: 0 }),
    })),
  );

const CallerMispair: ExtendedAction = (constants, s) => {
  if (s.phase !== 'idle' || s.turn >= constants.maxTurns) return [];
  return subsets(constants.toolIds)
    .filter((ids) => !sameIds(ids, s.pending))
    .map((ids) => ({ action: 'CallerMispair' as const, param: { ids }, state: s }));
};

const CallerCancel: ExtendedAction = (_constants, s) => {
  if (s.phase !== 'req') return [];
  return [
    {
      action: 'CallerCancel',
      param: null,
      state: { ...s, lastOutcome: 'err', pending: [], phase: 'idle', turn: s.turn + 1 },
    },
  ];
};

const ProviderRetry: ExtendedAction = (constants, s) => {
  if (s.phase !== 'req' || s.attempts > constants.maxRetries) return [];
  return [{ action: 'ProviderRetry', param: null, state: { ...s, attempts: s.attempts + 1 } }];
};

const StreamChunk: ExtendedAction = (constants, s) => {
  if (s.phase !== 'resp' || s.mode !== 'stream' || s.chunks >= constants.maxChunks) return [];
  const gotShape = s.wireShape === 'openai' ? 'messages' : s.wireShape;
  return [{ action: 'StreamChunk', param: null, state: { ...s, chunks: s.chunks + 1, gotShape } }];
};

const StreamFail: ExtendedAction = (_constants, s) => {
  if (s.phase !== 'resp' || s.mode !== 'stream' || s.chunks === 0) return [];
  return [
    {
      action: 'StreamFail',
      param: null,
      state: { ...s, lastOutcome: 'err', pending: [], phase: 'idle', turn: s.turn + 1 },
    },
  ];
};

/** The disjuncts of our `Next`, in the module's order. */
export const EXTENDED_ACTION_NAMES: readonly ExtendedActionName[] = [
  'CallerSend',
  'CallerMispair',
  'CallerAbort',
  'CallerCancel',
  'NoProvider',
  'ProviderRetry',
  'ProviderReply',
  'ProviderFail',
  'StreamChunk',
  'StreamFail',
  'Deliver',
  'Halted',
];

export const EXTENDED_ACTIONS: Readonly<Record<ExtendedActionName, ExtendedAction>> = {
  CallerSend: ExtendedCallerSend,
  CallerMispair,
  CallerAbort: lifted(CallerAbort),
  CallerCancel,
  NoProvider: lifted(NoProvider),
  ProviderRetry,
  ProviderReply: lifted(ProviderReply),
  ProviderFail: lifted(ProviderFail),
  StreamChunk,
  StreamFail,
  Deliver: lifted(Deliver, (s) => s.mode === 'send' || s.chunks > 0),
  Halted: lifted(Halted),
};

export function extendedKey(s: ExtendedState): string {
  return `${stateKey(s)}|${s.mode}|${s.attempts}|${s.chunks}`;
}

function inRange(value: number, low: number, high: number): boolean {
  return Number.isInteger(value) && value >= low && value <= high;
}

export const EXTENDED_INVARIANTS = [
  ...SEED_INVARIANTS.map(({ name, holds }) =>
    name === 'TypeOK'
      ? {
          name,
          holds: (c: ExtendedConstants, s: ExtendedState) =>
            holds(c, project(s)) &&
            MODES.includes(s.mode) &&
            inRange(s.attempts, 0, c.maxRetries + 1) &&
            inRange(s.chunks, 0, c.maxChunks),
        }
      : name === 'BoundedInv'
        ? {
            name,
            holds: (c: ExtendedConstants, s: ExtendedState) =>
              holds(c, project(s)) && s.attempts <= c.maxRetries + 1 && s.chunks <= c.maxChunks,
          }
        : { name, holds: (c: ExtendedConstants, s: ExtendedState) => holds(c, project(s)) },
  ),
  {
    name: 'NoReplayInv',
    holds: (c: ExtendedConstants, s: ExtendedState) =>
      s.phase !== 'req' || (s.chunks === 0 && inRange(s.attempts, 1, c.maxRetries + 1)),
  },
  {
    name: 'StreamInv',
    holds: (_c: ExtendedConstants, s: ExtendedState) => s.chunks === 0 || s.mode === 'stream',
  },
];

export const EXTENDED_PROPERTIES = [
  {
    name: 'SelectionStable',
    holds: (c: ExtendedConstants, from: ExtendedState, to: ExtendedState) =>
      SelectionStable(c, project(from), project(to)) || extendedKey(from) === extendedKey(to),
  },
  {
    name: 'RetryKeepsBody',
    holds: (_c: ExtendedConstants, from: ExtendedState, to: ExtendedState) =>
      !(from.phase === 'req' && to.phase === 'req') ||
      (sameIds(from.pending, to.pending) &&
        sameIds(from.reqIds, to.reqIds) &&
        from.wireShape === to.wireShape &&
        sameIds(from.wireIds, to.wireIds) &&
        sameIds(from.emitted, to.emitted) &&
        from.mode === to.mode &&
        from.chunks === to.chunks),
  },
];

/** Our specification as a machine for the explorer, optionally with some actions replaced. */
export function extendedMachine(
  actions: Partial<Record<ExtendedActionName, ExtendedAction>> = {},
): Machine<ExtendedState, ExtendedConstants, ExtendedStep> {
  const table = { ...EXTENDED_ACTIONS, ...actions };
  return {
    name: 'TpxTransport (spec/, as built)',
    init: ExtendedInit,
    next: (constants, state) => EXTENDED_ACTION_NAMES.flatMap((name) => table[name](constants, state)),
    key: extendedKey,
    invariants: EXTENDED_INVARIANTS,
    actionProperties: EXTENDED_PROPERTIES,
  };
}
