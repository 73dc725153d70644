/**
 * An explicit-state, breadth-first model checker for the executable models in this folder, counting the
 * way TLC counts, and an enumerator of every maximal behaviour for replaying the model against the
 * real transport.
 *
 * What is counted, and how it relates to TLC's summary line
 * ("N states generated, M distinct states found, 0 states left on queue. The depth of the complete
 * state graph search is D."):
 *
 * - `distinctStates`: reachable states, each once, keyed by the machine's canonical key over all
 *   variables. TLC's "distinct states found".
 * - `transitions`: every successor produced while expanding the reachable states, one per action and
 *   per value of the action's existential choice, duplicates and stuttering self-loops (`Halted`)
 *   included. `selfLoops` says how many of them are stutters.
 * - `statesGenerated`: initial states generated plus `transitions`. TLC's "states generated".
 * - `depth`: TLC's depth, which counts states, not steps: an initial state is at depth 1, and the
 *   depth is the greatest BFS level, i.e. the number of states on the longest shortest path from an
 *   initial state (one more than the diameter in steps).
 * - `deadlocks`: states with no successor at all. A stutter is a successor, so a state where only
 *   `Halted` is enabled is final, not deadlocked — as with TLC's `CHECK_DEADLOCK`.
 * - `behaviours`: the number of paths from an initial state to a final state (one whose successors are
 *   all stutters), stutters left out; the paths `enumerateBehaviours` yields.
 *
 * Violations carry a shortest counterexample (BFS order), from the initial step to the offending step.
 *
 * @module
 */
import { CFG_CONSTANTS, seedMachine, type Constants, type Step } from './model.js';

/** What every step of every machine carries. */
export interface StepLike<S> {
  readonly action: string;
  readonly param: unknown;
  readonly state: S;
}

/** A state machine with its checks: what a TLA+ module plus its `.cfg` gives TLC. */
export interface Machine<S, C, St extends StepLike<S>> {
  readonly name: string;
  /** The initial states, each as an `Init` step. */
  readonly init: (constants: C) => readonly St[];
  /** Every successor of a state, as labelled steps. */
  readonly next: (constants: C, state: S) => readonly St[];
  /** A canonical key: equal exactly when the states are equal in every variable. */
  readonly key: (state: S) => string;
  readonly invariants: readonly {
    readonly name: string;
    readonly holds: (constants: C, state: S) => boolean;
  }[];
  /** Properties of the form `[][A]_vars`, checked on every transition. */
  readonly actionProperties: readonly {
    readonly name: string;
    readonly holds: (constants: C, from: S, to: S) => boolean;
  }[];
}

export interface Violation<St> {
  readonly kind: 'invariant' | 'action-property' | 'deadlock';
  /** The invariant or property broken, or `Deadlock`. */
  readonly property: string;
  /** From the initial step to the step that broke it (for a deadlock: to the deadlocked state). */
  readonly trace: readonly St[];
}

export interface Exploration<St> {
  readonly machine: string;
  readonly initialStates: number;
  readonly distinctStates: number;
  readonly transitions: number;
  readonly selfLoops: number;
  readonly statesGenerated: number;
  readonly depth: number;
  readonly deadlocks: number;
  readonly finalStates: number;
  /** Paths from an initial to a final state; `Infinity` when a cycle other than a stutter is reachable. */
  readonly behaviours: number;
  /** The first violation of each property, in BFS order. */
  readonly violations: readonly Violation<St>[];
  /** The keys of all reachable states, in discovery order. */
  readonly stateKeys: readonly string[];
}

export interface ExploreOptions<S, St> {
  /** Called for every transition, self-loops included. */
  readonly onTransition?: (from: S, step: St) => void;
  /** Refuse to explore more states than this. @default 1_000_000 */
  readonly maxStates?: number;
}

interface Node<S, St> {
  readonly state: S;
  readonly level: number;
  readonly parent: string | undefined;
  readonly via: St;
  /** Keys of non-stuttering successors, with multiplicity; undefined until expanded. */
  progress?: string[];
  isFinal?: boolean;
}

/** Breadth-first exploration of every reachable state, checking every invariant and action property. */
export function explore<S, C, St extends StepLike<S>>(
  machine: Machine<S, C, St>,
  constants: C,
  options: ExploreOptions<S, St> = {},
): Exploration<St> {
  const maxStates = options.maxStates ?? 1_000_000;
  const nodes = new Map<string, Node<S, St>>();
  const queue: string[] = [];
  const violations: Violation<St>[] = [];
  const violated = new Set<string>();
  let initialSteps = 0;
  let transitions = 0;
  let selfLoops = 0;
  let deadlocks = 0;
  let finalStates = 0;
  let depth = 0;

  const traceTo = (key: string): St[] => {
    const trace: St[] = [];
    for (
      let node = nodes.get(key);
      node !== undefined;
      node = node.parent === undefined ? undefined : nodes.get(node.parent)
    ) {
      trace.push(node.via);
    }
    return trace.reverse();
  };
  const report = (kind: Violation<St>['kind'], property: string, trace: St[]): void => {
    if (violated.has(property)) return;
    violated.add(property);
    violations.push({ kind, property, trace });
  };
  const discover = (key: string, node: Node<S, St>): void => {
    if (nodes.size >= maxStates) throw new RangeError(`${machine.name}: more than ${maxStates} states`);
    nodes.set(key, node);
    queue.push(key);
    depth = Math.max(depth, node.level);
    for (const invariant of machine.invariants) {
      if (!invariant.holds(constants, node.state)) report('invariant', invariant.name, traceTo(key));
    }
  };

  for (const step of machine.init(constants)) {
    initialSteps++;
    const key = machine.key(step.state);
    if (!nodes.has(key)) discover(key, { state: step.state, level: 1, parent: undefined, via: step });
  }
  const initialKeys = [...nodes.keys()];

  for (let head = 0; head < queue.length; head++) {
    const fromKey = queue[head]!;
    const from = nodes.get(fromKey)!;
    const successors = machine.next(constants, from.state);
    const progress: string[] = [];
    if (successors.length === 0) {
      deadlocks++;
      report('deadlock', 'Deadlock', traceTo(fromKey));
    }
    for (const step of successors) {
      transitions++;
      options.onTransition?.(from.state, step);
      const toKey = machine.key(step.state);
      if (toKey === fromKey) selfLoops++;
      else progress.push(toKey);
      for (const property of machine.actionProperties) {
        if (!property.holds(constants, from.state, step.state)) {
          report('action-property', property.name, [...traceTo(fromKey), step]);
        }
      }
      if (!nodes.has(toKey))
        discover(toKey, { state: step.state, level: from.level + 1, parent: fromKey, via: step });
    }
    from.progress = progress;
    from.isFinal = successors.length > 0 && progress.length === 0;
    if (from.isFinal) finalStates++;
  }

  return {
    machine: machine.name,
    initialStates: initialKeys.length,
    distinctStates: nodes.size,
    transitions,
    selfLoops,
    statesGenerated: initialSteps + transitions,
    depth,
    deadlocks,
    finalStates,
    behaviours: countPaths(nodes, initialKeys),
    violations,
    stateKeys: queue,
  };
}

/** Paths to final states, by memoised depth-first counting over the explored graph. */
function countPaths<S, St>(nodes: ReadonlyMap<string, Node<S, St>>, initialKeys: readonly string[]): number {
  const memo = new Map<string, number>();
  const onStack = new Set<string>();
  const paths = (key: string): number => {
    const known = memo.get(key);
    if (known !== undefined) return known;
    if (onStack.has(key)) return Infinity; // a cycle: unboundedly many behaviours
    const node = nodes.get(key)!;
    onStack.add(key);
    let total = node.isFinal === true ? 1 : 0;
    for (const successor of node.progress ?? []) total += paths(successor);
    onStack.delete(key);
    memo.set(key, total);
    return total;
  };
  return initialKeys.reduce((sum, key) => sum + paths(key), 0);
}

/**
 * Every maximal behaviour of a machine: each path of steps from an initial step to a final state,
 * without the final stutter. Depth-first, in the order the machine lists its actions, so the order is
 * stable from run to run. Throws on a cycle other than a stutter, where there would be infinitely many.
 * Paths that end in a deadlock are not behaviours and are not yielded.
 */
export function* enumerateBehaviours<S, C, St extends StepLike<S>>(
  machine: Machine<S, C, St>,
  constants: C,
): Generator<St[]> {
  const seen = new Set<string>();
  for (const first of machine.init(constants)) {
    const key = machine.key(first.state);
    if (seen.has(key)) continue;
    seen.add(key);
    yield* extend(machine, constants, [first], new Set([key]));
  }
}

function* extend<S, C, St extends StepLike<S>>(
  machine: Machine<S, C, St>,
  constants: C,
  path: St[],
  onPath: Set<string>,
): Generator<St[]> {
  const last = path[path.length - 1]!;
  const lastKey = machine.key(last.state);
  const successors = machine.next(constants, last.state);
  const progress = successors.filter((step) => machine.key(step.state) !== lastKey);
  if (successors.length > 0 && progress.length === 0) {
    yield [...path];
    return;
  }
  for (const step of progress) {
    const key = machine.key(step.state);
    if (onPath.has(key)) throw new Error(`${machine.name}: a cycle through ${key}; behaviours are unbounded`);
    onPath.add(key);
    path.push(step);
    yield* extend(machine, constants, path, onPath);
    path.pop();
    onPath.delete(key);
  }
}

/** Every maximal behaviour of the seed model: what the replay drives the real transport through. */
export function behaviours(constants: Constants = CFG_CONSTANTS): Generator<Step[]> {
  return enumerateBehaviours(seedMachine(), constants);
}

/** The seed model explored for the given bounds. */
export function exploreSeed(constants: Constants = CFG_CONSTANTS): Exploration<Step> {
  return explore(seedMachine(), constants);
}

/** A violation as readable lines: the property, then one line per step. */
export function formatViolation<S, St extends StepLike<S>>(
  violation: Violation<St>,
  show: (state: S) => string,
): string {
  const lines = violation.trace.map((step, index) => {
    const param = step.param === null ? '' : ` ${JSON.stringify(step.param)}`;
    return `  ${index + 1}. ${step.action}${param}: ${show(step.state)}`;
  });
  return [`${violation.kind} ${violation.property} violated:`, ...lines].join('\n');
}
