/**
 * Two independent recounts of the seed's state graph, to check `explore.ts` and `model.ts` against:
 *
 * 1. `recountDepthFirst`: the seed's actions written a second time, straight from the TLA+ text, over a
 *    different representation — every state packed into one integer (mixed radix, sets as bitmasks) —
 *    and explored depth-first with an explicit stack. It shares no code with `model.ts` or `explore.ts`.
 * 2. `closedForm`: the counts derived by hand from the structure of the spec (derivation in
 *    `spec/README.md`), as formulas in `MaxTurns` and the number of tool ids.
 *
 * @module
 */

/** A state of the seed as small integers. Providers: 0 ANTHROPIC, 1 TPX, 2 NONE; shapes: 0 messages,
 *  1 openai; phases: 0 idle, 1 req, 2 resp; outcomes: 0 none, 1 ok, 2 err; sets: bitmasks. */
interface Unpacked {
  hasKey: number;
  hasToken: number;
  provider: number;
  turn: number;
  phase: number;
  pending: number;
  reqIds: number;
  wireShape: number;
  wireIds: number;
  emitted: number;
  gotShape: number;
  lastOutcome: number;
}

const ANTHROPIC = 0;
const TPX = 1;
const NONE = 2;
const MESSAGES = 0;
const OPENAI = 1;
const IDLE = 0;
const REQ = 1;
const RESP = 2;
const OK = 1;
const ERR = 2;

/** The radix of each field, in packing order (the order of the seed's `vars`). */
function radices(maxTurns: number, toolCount: number): [keyof Unpacked, number][] {
  const sets = 2 ** toolCount;
  return [
    ['hasKey', 2],
    ['hasToken', 2],
    ['provider', 3],
    ['turn', maxTurns + 1],
    ['phase', 3],
    ['pending', sets],
    ['reqIds', sets],
    ['wireShape', 2],
    ['wireIds', sets],
    ['emitted', sets],
    ['gotShape', 2],
    ['lastOutcome', 3],
  ];
}

function pack(fields: readonly [keyof Unpacked, number][], s: Unpacked): number {
  let code = 0;
  for (const [name, radix] of fields) {
    const value = s[name];
    if (!Number.isInteger(value) || value < 0 || value >= radix)
      throw new RangeError(`${name}=${value} out of range`);
    code = code * radix + value;
  }
  return code;
}

function unpack(fields: readonly [keyof Unpacked, number][], code: number): Unpacked {
  const s = {} as Unpacked;
  for (let index = fields.length - 1; index >= 0; index--) {
    const [name, radix] = fields[index]!;
    s[name] = code % radix;
    code = Math.floor(code / radix);
  }
  return s;
}

/** The seed's `Next`, once more, on bitmasks. Returns successors with multiplicity (one per action and choice). */
function successors(maxTurns: number, toolCount: number, s: Unpacked): Unpacked[] {
  const out: Unpacked[] = [];
  const native = s.provider === TPX ? OPENAI : MESSAGES;
  if (s.phase === IDLE && s.turn < maxTurns) {
    if (s.provider !== NONE) {
      out.push({ ...s, reqIds: s.pending, wireShape: native, wireIds: s.pending, phase: REQ }); // CallerSend
      if (s.pending !== 0) out.push({ ...s, lastOutcome: ERR, pending: 0, turn: s.turn + 1 }); // CallerAbort
    } else {
      out.push({ ...s, lastOutcome: ERR, turn: s.turn + 1 }); // NoProvider
    }
  }
  if (s.phase === REQ) {
    for (let ids = 0; ids < 2 ** toolCount; ids++) {
      out.push({ ...s, emitted: ids, wireIds: ids, wireShape: native, phase: RESP }); // ProviderReply
    }
    out.push({ ...s, lastOutcome: ERR, pending: 0, phase: IDLE, turn: s.turn + 1 }); // ProviderFail
  }
  if (s.phase === RESP) {
    const gotShape = s.wireShape === OPENAI ? MESSAGES : s.wireShape;
    out.push({ ...s, gotShape, pending: s.wireIds, lastOutcome: OK, phase: IDLE, turn: s.turn + 1 }); // Deliver
  }
  if (s.phase === IDLE && s.turn === maxTurns) out.push({ ...s }); // Halted
  return out;
}

export interface Recount {
  readonly distinctStates: number;
  readonly transitions: number;
  readonly selfLoops: number;
  readonly deadlocks: number;
  readonly finalStates: number;
  readonly behaviours: number;
  /** Every reachable state, packed. */
  readonly codes: ReadonlySet<number>;
}

/** Depth-first recount of the seed's reachable states, transitions and behaviours. */
export function recountDepthFirst(maxTurns: number, toolCount: number): Recount {
  const fields = radices(maxTurns, toolCount);
  const graph = new Map<number, number[]>(); // code -> successor codes, with multiplicity
  const stack: number[] = [];
  for (const hasKey of [0, 1]) {
    for (const hasToken of [0, 1]) {
      const provider = hasKey === 1 ? ANTHROPIC : hasToken === 1 ? TPX : NONE;
      stack.push(
        pack(fields, {
          hasKey,
          hasToken,
          provider,
          turn: 0,
          phase: IDLE,
          pending: 0,
          reqIds: 0,
          wireShape: MESSAGES,
          wireIds: 0,
          emitted: 0,
          gotShape: MESSAGES,
          lastOutcome: 0,
        }),
      );
    }
  }
  const initial = [...new Set(stack)];
  let transitions = 0;
  let selfLoops = 0;
  let deadlocks = 0;
  while (stack.length > 0) {
    const code = stack.pop()!;
    if (graph.has(code)) continue;
    const next = successors(maxTurns, toolCount, unpack(fields, code)).map((s) => pack(fields, s));
    graph.set(code, next);
    transitions += next.length;
    selfLoops += next.filter((to) => to === code).length;
    if (next.length === 0) deadlocks++;
    for (const to of next) if (!graph.has(to)) stack.push(to);
  }

  // Behaviours: paths to states whose only successors are stutters, counted by a post-order walk.
  const paths = new Map<number, number>();
  const order: number[] = [];
  const visited = new Set<number>();
  for (const root of initial) {
    const work: [number, boolean][] = [[root, false]];
    while (work.length > 0) {
      const [code, expanded] = work.pop()!;
      if (expanded) {
        order.push(code);
        continue;
      }
      if (visited.has(code)) continue;
      visited.add(code);
      work.push([code, true]);
      for (const to of graph.get(code) ?? []) if (to !== code && !visited.has(to)) work.push([to, false]);
    }
  }
  let finalStates = 0;
  for (const code of order) {
    const next = graph.get(code) ?? [];
    const moving = next.filter((to) => to !== code);
    const isFinal = next.length > 0 && moving.length === 0;
    if (isFinal) finalStates++;
    paths.set(code, (isFinal ? 1 : 0) + moving.reduce((sum, to) => sum + (paths.get(to) ?? Number.NaN), 0));
  }
  const behaviours = initial.reduce((sum, code) => sum + (paths.get(code) ?? Number.NaN), 0);

  return {
    distinctStates: graph.size,
    transitions,
    selfLoops,
    deadlocks,
    finalStates,
    behaviours,
    codes: new Set(graph.keys()),
  };
}

/** The fields of a model state, for packing a `model.ts` state into this file's encoding. */
export interface SeedLike {
  readonly hasKey: boolean;
  readonly hasToken: boolean;
  readonly provider: 'ANTHROPIC' | 'TPX' | 'NONE';
  readonly turn: number;
  readonly phase: 'idle' | 'req' | 'resp';
  readonly pending: readonly string[];
  readonly reqIds: readonly string[];
  readonly wireShape: 'messages' | 'openai';
  readonly wireIds: readonly string[];
  readonly emitted: readonly string[];
  readonly gotShape: 'messages' | 'openai';
  readonly lastOutcome: 'none' | 'ok' | 'err';
}

/** Packs a state of `model.ts` into this file's integer encoding, so the two state sets can be compared. */
export function packSeedState(maxTurns: number, toolIds: readonly string[], s: SeedLike): number {
  const sorted = [...toolIds].sort();
  const mask = (ids: readonly string[]) =>
    ids.reduce((bits, id) => {
      const index = sorted.indexOf(id);
      if (index < 0) throw new RangeError(`unknown tool id ${id}`);
      return bits | (2 ** index);
    }, 0);
  const shape = (value: 'messages' | 'openai') => (value === 'openai' ? OPENAI : MESSAGES);
  return pack(radices(maxTurns, toolIds.length), {
    hasKey: s.hasKey ? 1 : 0,
    hasToken: s.hasToken ? 1 : 0,
    provider: { ANTHROPIC, TPX, NONE }[s.provider],
    turn: s.turn,
    phase: { idle: IDLE, req: REQ, resp: RESP }[s.phase],
    pending: mask(s.pending),
    reqIds: mask(s.reqIds),
    wireShape: shape(s.wireShape),
    wireIds: mask(s.wireIds),
    emitted: mask(s.emitted),
    gotShape: shape(s.gotShape),
    lastOutcome: { none: 0, ok: OK, err: ERR }[s.lastOutcome],
  });
}

export interface ClosedForm {
  readonly distinctStates: number;
  readonly transitions: number;
  readonly statesGenerated: number;
  readonly depth: number;
  readonly deadlocks: number;
  readonly behaviours: number;
}

/**
 * The seed's counts as formulas in M = MaxTurns and N = 2^|ToolIds| (derivation: `spec/README.md`).
 * Per provider with credentials (three of the four initial states), at turn k:
 *
 * - idle states I(k): 1, N+1, N²+2N−1, then 2N² for k ≥ 3 (k ≤ M);
 * - req states Q(k) (k < M): 1, N+1, then 2N;
 * - resp states R(k) (k < M): N, then N(N+1);
 * - idle states with pending ≠ {} A(k) (k < M): 0, N−1, then N(N−1).
 *
 * The credential-less initial state adds the M+1 states of its `NoProvider` chain.
 */
export function closedForm(maxTurns: number, toolCount: number): ClosedForm {
  const M = maxTurns;
  const N = 2 ** toolCount;
  const idle = (k: number) => (k === 0 ? 1 : k === 1 ? N + 1 : k === 2 ? N * N + 2 * N - 1 : 2 * N * N);
  const req = (k: number) => (k === 0 ? 1 : k === 1 ? N + 1 : 2 * N);
  const resp = (k: number) => (k === 0 ? N : N * (N + 1));
  const abortable = (k: number) => (k === 0 ? 0 : k === 1 ? N - 1 : N * (N - 1));

  let states = idle(M);
  let edges = idle(M); // the Halted stutter of every final state
  for (let k = 0; k < M; k++) {
    states += idle(k) + req(k) + resp(k);
    // idle: CallerSend, and CallerAbort where something is pending; req: N replies and a failure;
    // resp: Deliver.
    edges += idle(k) + abortable(k) + (N + 1) * req(k) + resp(k);
  }
  const distinctStates = 3 * states + (M + 1);
  const transitions = 3 * edges + (M + 1);

  // Paths with k turns left from an idle state with nothing pending (a) or something pending (b):
  // a(k) = 2a(k−1) + (N−1)b(k−1)  (reply {} or fail → nothing pending; reply non-empty → something)
  // b(k) = 3a(k−1) + (N−1)b(k−1)  (the same, plus CallerAbort)
  let a = 1;
  let b = 1;
  for (let k = 1; k <= M; k++) [a, b] = [2 * a + (N - 1) * b, 3 * a + (N - 1) * b];

  // Depth counts states (an initial state is at depth 1). The deepest state for M ≥ 2 delivers in each
  // of the last two turns, answering a non-empty set in the last one; the turns before it fail fast
  // (2 steps each): 2(M−2) + 3 + 3 steps. With no tool ids nothing is ever pending, and the deepest
  // state only delivers in the last turn: 2(M−1) + 3 steps.
  const steps = M === 0 ? 0 : M === 1 || N === 1 ? 2 * M + 1 : 2 * M + 2;
  const depth = steps + 1;

  return {
    distinctStates,
    transitions,
    statesGenerated: 4 + transitions,
    depth,
    deadlocks: 0,
    behaviours: 3 * a + 1,
  };
}
