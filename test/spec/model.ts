/**
 * The seed specification (`TpxTransport.tla`, the module the project's acceptance criteria are written
 * in) as an executable state machine.
 *
 * Each TLA+ action is one function from a state to the list of its successors. A successor is a `Step`:
 * the action's name, the value its existential quantifier picked (`ProviderReply`'s `ids`, the
 * credentials of `Init`), and the next state. A replay driver can therefore follow any path of the
 * state graph one step at a time and know, at each step, what the real transport must be made to do.
 *
 * Representation: the twelve variables of the seed, and nothing else. Sets of tool ids are arrays
 * sorted in code-unit order without duplicates, so two states are equal exactly when their canonical
 * keys (`stateKey`) are equal. The model values `ANTHROPIC`, `TPX` and `NONE` are kept as strings.
 *
 * @module
 */
import type { Machine } from './explore.js';

export type Provider = 'ANTHROPIC' | 'TPX' | 'NONE';
export type Shape = 'messages' | 'openai';
export type Phase = 'idle' | 'req' | 'resp';
export type Outcome = 'none' | 'ok' | 'err';
/** A finite set of tool ids: sorted, no duplicates. */
export type IdSet = readonly string[];

export const PROVIDERS: readonly Provider[] = ['ANTHROPIC', 'TPX', 'NONE'];
export const SHAPES: readonly Shape[] = ['messages', 'openai'];
export const PHASES: readonly Phase[] = ['idle', 'req', 'resp'];
export const OUTCOMES: readonly Outcome[] = ['none', 'ok', 'err'];

/** The model values mapped to the implementation's provider names (`transport.provider`). */
export const PROVIDER_NAME: Readonly<Record<Provider, 'anthropic' | 'tpx' | 'none'>> = {
  ANTHROPIC: 'anthropic',
  TPX: 'tpx',
  NONE: 'none',
};

/** The spec's constants `MaxTurns` and `ToolIds`. */
export interface Constants {
  readonly maxTurns: number;
  readonly toolIds: readonly string[];
}

/** The bounds of `TpxTransport.cfg`. */
export const CFG_CONSTANTS: Constants = { maxTurns: 3, toolIds: ['t1', 't2'] };
/** A larger bound, for confidence that nothing depends on the small one. */
export const LARGER_CONSTANTS: Constants = { maxTurns: 4, toolIds: ['t1', 't2', 't3'] };

/** One state: exactly the seed's `vars`. */
export interface State {
  readonly hasKey: boolean;
  readonly hasToken: boolean;
  readonly provider: Provider;
  readonly turn: number;
  readonly phase: Phase;
  readonly pending: IdSet;
  readonly reqIds: IdSet;
  readonly wireShape: Shape;
  readonly wireIds: IdSet;
  readonly emitted: IdSet;
  readonly gotShape: Shape;
  readonly lastOutcome: Outcome;
}

export type ActionName =
  'CallerSend' | 'CallerAbort' | 'NoProvider' | 'ProviderReply' | 'ProviderFail' | 'Deliver' | 'Halted';

/** The disjuncts of `Next`, in the order the seed lists them. */
export const ACTION_NAMES: readonly ActionName[] = [
  'CallerSend',
  'CallerAbort',
  'NoProvider',
  'ProviderReply',
  'ProviderFail',
  'Deliver',
  'Halted',
];

/** One transition (or, for `Init`, one initial state) with the choice that produced it. */
export type Step =
  | {
      readonly action: 'Init';
      readonly param: { readonly hasKey: boolean; readonly hasToken: boolean };
      readonly state: State;
    }
  | { readonly action: 'ProviderReply'; readonly param: { readonly ids: IdSet }; readonly state: State }
  | { readonly action: Exclude<ActionName, 'ProviderReply'>; readonly param: null; readonly state: State };

export type ActionFunction = (constants: Constants, state: State) => Step[];
export type ActionTable = Readonly<Record<ActionName, ActionFunction>>;

// ---------------------------------------------------------------------------------------------------
// Helpers: the spec's operators.

/** `Select(k, t)`: key wins, then token, then nothing. */
export function Select(hasKey: boolean, hasToken: boolean): Provider {
  if (hasKey) return 'ANTHROPIC';
  if (hasToken) return 'TPX';
  return 'NONE';
}

/** `NativeShape(p)`. */
export function NativeShape(provider: Provider): Shape {
  return provider === 'TPX' ? 'openai' : 'messages';
}

/** Canonical form of a set of ids. */
export function idSet(ids: Iterable<string>): IdSet {
  return [...new Set(ids)].sort();
}

/** `SUBSET ToolIds`, each subset canonical, ordered by bitmask over the sorted ids. */
export function subsets(toolIds: readonly string[]): IdSet[] {
  const sorted = idSet(toolIds);
  const result: IdSet[] = [];
  for (let mask = 0; mask < 2 ** sorted.length; mask++) {
    result.push(sorted.filter((_, index) => (mask & (2 ** index)) !== 0));
  }
  return result;
}

export function sameIds(a: IdSet, b: IdSet): boolean {
  return a.length === b.length && a.every((id, index) => id === b[index]);
}

/** The canonical key of a state: every one of the twelve variables, in the order of `vars`. */
export function stateKey(state: State): string {
  return [
    state.hasKey ? 'K' : 'k',
    state.hasToken ? 'T' : 't',
    state.provider,
    String(state.turn),
    state.phase,
    state.pending.join(','),
    state.reqIds.join(','),
    state.wireShape,
    state.wireIds.join(','),
    state.emitted.join(','),
    state.gotShape,
    state.lastOutcome,
  ].join('|');
}

function checkConstants(constants: Constants): void {
  if (!Number.isInteger(constants.maxTurns) || constants.maxTurns < 0) {
    throw new RangeError(`MaxTurns must be a natural number, got ${constants.maxTurns}`);
  }
  for (const id of constants.toolIds) {
    // The canonical key joins ids with ',' and fields with '|': an id containing either would make two
    // different states share a key.
    if (id === '' || /[,|]/.test(id)) throw new RangeError(`tool id ${JSON.stringify(id)} cannot be keyed`);
  }
  if (new Set(constants.toolIds).size !== constants.toolIds.length) {
    throw new RangeError('ToolIds must not repeat an id');
  }
}

// ---------------------------------------------------------------------------------------------------
// Init and the actions.

/** `Init`: the four credential combinations, each with its selected provider. */
export function Init(constants: Constants): Step[] {
  checkConstants(constants);
  const steps: Step[] = [];
  for (const hasKey of [false, true]) {
    for (const hasToken of [false, true]) {
      steps.push({
        action: 'Init',
        param: { hasKey, hasToken },
        state: {
          hasKey,
          hasToken,
          provider: Select(hasKey, hasToken),
          turn: 0,
          phase: 'idle',
          pending: [],
          reqIds: [],
          wireShape: 'messages',
          wireIds: [],
          emitted: [],
          gotShape: 'messages',
          lastOutcome: 'none',
        },
      });
    }
  }
  return steps;
}

/** All initial states. */
export function init(constants: Constants): State[] {
  return Init(constants).map((step) => step.state);
}

/** `CallerSend`: the caller answers exactly the pending ids; the body goes out in the provider's shape. */
export function CallerSend(constants: Constants, s: State): Step[] {
  if (s.phase !== 'idle' || s.turn >= constants.maxTurns || s.provider === 'NONE') return [];
  return [
    {
      action: 'CallerSend',
      param: null,
      state: {
        ...s,
        reqIds: s.pending,
        wireShape: NativeShape(s.provider),
        wireIds: s.pending,
        phase: 'req',
      },
    },
  ];
}

/** `CallerAbort`: the caller cannot answer; the obligations are dropped with an error. */
export function CallerAbort(constants: Constants, s: State): Step[] {
  if (s.phase !== 'idle' || s.turn >= constants.maxTurns || s.provider === 'NONE' || s.pending.length === 0) {
    return [];
  }
  return [
    {
      action: 'CallerAbort',
      param: null,
      state: { ...s, lastOutcome: 'err', pending: [], turn: s.turn + 1 },
    },
  ];
}

/** `NoProvider`: no credentials at boot, the exchange fails at once. */
export function NoProvider(constants: Constants, s: State): Step[] {
  if (s.phase !== 'idle' || s.turn >= constants.maxTurns || s.provider !== 'NONE') return [];
  return [{ action: 'NoProvider', param: null, state: { ...s, lastOutcome: 'err', turn: s.turn + 1 } }];
}

/** `ProviderReply`: one successor for every subset of `ToolIds` the provider may emit. */
export function ProviderReply(constants: Constants, s: State): Step[] {
  if (s.phase !== 'req') return [];
  return subsets(constants.toolIds).map((ids) => ({
    action: 'ProviderReply',
    param: { ids },
    state: { ...s, emitted: ids, wireIds: ids, wireShape: NativeShape(s.provider), phase: 'resp' },
  }));
}

/** `ProviderFail`: network, HTTP or protocol failure ends the exchange in an error. */
export function ProviderFail(_constants: Constants, s: State): Step[] {
  if (s.phase !== 'req') return [];
  return [
    {
      action: 'ProviderFail',
      param: null,
      state: { ...s, lastOutcome: 'err', pending: [], phase: 'idle', turn: s.turn + 1 },
    },
  ];
}

/** `Deliver`: the caller gets a Messages body; its new obligations are the ids on the wire. */
export function Deliver(_constants: Constants, s: State): Step[] {
  if (s.phase !== 'resp') return [];
  return [
    {
      action: 'Deliver',
      param: null,
      state: {
        ...s,
        gotShape: s.wireShape === 'openai' ? 'messages' : s.wireShape,
        pending: s.wireIds,
        lastOutcome: 'ok',
        phase: 'idle',
        turn: s.turn + 1,
      },
    },
  ];
}

/** `Halted`: the terminal stutter once the turn budget is spent. */
export function Halted(constants: Constants, s: State): Step[] {
  if (s.phase !== 'idle' || s.turn !== constants.maxTurns) return [];
  return [{ action: 'Halted', param: null, state: s }];
}

export const SEED_ACTIONS: ActionTable = {
  CallerSend,
  CallerAbort,
  NoProvider,
  ProviderReply,
  ProviderFail,
  Deliver,
  Halted,
};

/** `Next`: the successors of a state under every action, in the seed's order. */
export function next(constants: Constants, s: State, actions: ActionTable = SEED_ACTIONS): Step[] {
  return ACTION_NAMES.flatMap((name) => actions[name](constants, s));
}

// ---------------------------------------------------------------------------------------------------
// Invariants and the action property.

function isIdSet(value: IdSet, constants: Constants): boolean {
  return (
    value.every((id, index) => index === 0 || (value[index - 1] ?? '') < id) &&
    value.every((id) => constants.toolIds.includes(id))
  );
}

/** `TypeOK`, with the representation's own requirement that sets are canonical. */
export function TypeOK(constants: Constants, s: State): boolean {
  return (
    typeof s.hasKey === 'boolean' &&
    typeof s.hasToken === 'boolean' &&
    PROVIDERS.includes(s.provider) &&
    Number.isInteger(s.turn) &&
    s.turn >= 0 &&
    s.turn <= constants.maxTurns &&
    PHASES.includes(s.phase) &&
    isIdSet(s.pending, constants) &&
    isIdSet(s.reqIds, constants) &&
    SHAPES.includes(s.wireShape) &&
    isIdSet(s.wireIds, constants) &&
    isIdSet(s.emitted, constants) &&
    SHAPES.includes(s.gotShape) &&
    OUTCOMES.includes(s.lastOutcome)
  );
}

/** `ShapeInv`: the caller only ever sees Messages-shaped bodies. */
export function ShapeInv(_constants: Constants, s: State): boolean {
  return s.gotShape === 'messages';
}

/** `PairingInv`: tool ids survive translation both ways, and delivery sets exactly the emitted obligations. */
export function PairingInv(_constants: Constants, s: State): boolean {
  const onTheWayOut = s.phase !== 'req' || (sameIds(s.wireIds, s.reqIds) && sameIds(s.reqIds, s.pending));
  const onTheWayBack = s.phase !== 'resp' || sameIds(s.wireIds, s.emitted);
  const delivered = !(s.phase === 'idle' && s.lastOutcome === 'ok') || sameIds(s.pending, s.emitted);
  return onTheWayOut && onTheWayBack && delivered;
}

/** `SelectionInv`: the provider is `Select` of the boot credentials. */
export function SelectionInv(_constants: Constants, s: State): boolean {
  return s.provider === Select(s.hasKey, s.hasToken);
}

/** `BoundedInv`. */
export function BoundedInv(constants: Constants, s: State): boolean {
  return s.turn <= constants.maxTurns;
}

/**
 * `SelectionStable == [][CredsUnchanged]_vars`, checked on one transition: credentials and provider are
 * unchanged, or the step is a stutter (`UNCHANGED vars`).
 */
export function SelectionStable(_constants: Constants, from: State, to: State): boolean {
  const credsUnchanged =
    from.hasKey === to.hasKey && from.hasToken === to.hasToken && from.provider === to.provider;
  return credsUnchanged || stateKey(from) === stateKey(to);
}

export const SEED_INVARIANTS = [
  { name: 'TypeOK', holds: TypeOK },
  { name: 'ShapeInv', holds: ShapeInv },
  { name: 'PairingInv', holds: PairingInv },
  { name: 'SelectionInv', holds: SelectionInv },
  { name: 'BoundedInv', holds: BoundedInv },
] as const;

export const SEED_PROPERTIES = [{ name: 'SelectionStable', holds: SelectionStable }] as const;

/** Options to build a variant of the seed machine: the explorer's tests break one piece at a time. */
export interface SeedVariant {
  readonly name?: string;
  readonly init?: (constants: Constants) => Step[];
  readonly actions?: Partial<ActionTable>;
}

/** The seed as a machine the explorer can run, optionally with some pieces replaced. */
export function seedMachine(variant: SeedVariant = {}): Machine<State, Constants, Step> {
  const actions: ActionTable = { ...SEED_ACTIONS, ...variant.actions };
  return {
    name: variant.name ?? 'TpxTransport (seed)',
    init: variant.init ?? Init,
    next: (constants, state) => next(constants, state, actions),
    key: stateKey,
    invariants: SEED_INVARIANTS,
    actionProperties: SEED_PROPERTIES,
  };
}

/** A compact one-line rendering of a state, for counterexample traces. */
export function showState(s: State): string {
  const set = (ids: IdSet) => `{${ids.join(',')}}`;
  return (
    `${s.provider} key=${s.hasKey} token=${s.hasToken} turn=${s.turn} ${s.phase} ` +
    `pending=${set(s.pending)} reqIds=${set(s.reqIds)} wire=${s.wireShape}${set(s.wireIds)} ` +
    `emitted=${set(s.emitted)} got=${s.gotShape} last=${s.lastOutcome}`
  );
}
