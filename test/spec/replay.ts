/**
 * Trace conformance: every behaviour of the seed model (`behaviours()` in `explore.ts`) replayed against
 * the real `createTransport` + `createSession`, over loopback HTTP, with the implementation's observable
 * state compared to the model's after every step.
 *
 * How each step of a behaviour is made to happen:
 *
 * | model step             | what the replay does                                                                  |
 * | ---------------------- | ------------------------------------------------------------------------------------- |
 * | `Init(hasKey,hasToken)`| `createTransport({ env })` with the key and/or token present, base URLs pointing at    |
 * |                        | the two scripted servers; then `createSession`; then the `env` object is changed       |
 * | `CallerSend`           | `session.send` / `session.stream` with a history answering each pending `tool_use`     |
 * |                        | with exactly one `tool_result`                                                         |
 * | `ProviderReply(ids)`   | the scripted server answers that request with one tool call per id                    |
 * | `ProviderFail`         | the scripted server fails it: reset, no headers (short first-byte deadline), 503,     |
 * |                        | malformed body, in rotation                                                            |
 * | `Deliver`              | the `send` / the stream's `message_stop` reaching the caller                          |
 * | `CallerAbort`          | `session.abort()`                                                                      |
 * | `NoProvider`           | `session.send` / `session.stream` without credentials                                 |
 *
 * `CallerSend`, `ProviderReply` / `ProviderFail` and `Deliver` are one real call: the replay looks ahead
 * in the behaviour to script the server's answer (`replay-upstream.ts`) before making it.
 *
 * What is compared, per step, with the model's state after that step:
 *
 * - `provider`: `transport.provider` and `transport.selection.provider` (after `env` changed under it);
 * - `turn`, `lastOutcome`, `pending`: `session.turns`, `session.lastOutcome`, and `session.pending`
 *   decoded with the tool-id codec to the provider's ids, then mapped to the model's ids;
 * - `reqIds`, `wireIds`, `wireShape` (when the request reaches the server): the caller's `tool_result`
 *   ids, the ids on the recorded outbound body (tpx: `tool_call_id` of the `role:"tool"` messages after the
 *   last assistant message; anthropic: `tool_use_id` of the `tool_result` blocks of the last message), and
 *   the body's protocol (validated: the vendored OpenAI schema, or the Messages request validator);
 * - `emitted`: the ids the server wrote; in a stream, the ledger is also read while the answer streams;
 * - `gotShape`: what the caller got — `validateMessage`, or `validateStreamEvent` plus the stream grammar
 *   plus the accumulated message; for errors, a `TransportError` whose body is a Messages error.
 *
 * Besides the model's variables: the failure's error code, `MODEL_EAUTH` with no request at any server
 * for `NoProvider`, no request for `CallerAbort`, and a replay-level deadline on every exchange, whose
 * passing is reported as a `Termination` violation.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createSession,
  createTransport,
  decodeToolId,
  isTransportError,
  validateMessage,
  validateMessagesRequest,
  validateStreamEvent,
  type ContentBlockParam,
  type ExchangeOptions,
  type Message,
  type MessageParam,
  type MessagesRequest,
  type MessageStreamEvent,
  type ModelTransport,
  type Session,
  type TransportErrorCode,
} from '../../src/index.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { createStreamGrammar } from '../../src/protocol/stream-grammar.js';
import { assertValidChatCompletionRequest } from '../helpers/chat-schema.js';
import {
  startScriptedServer,
  step as serverStep,
  type RecordedRequest,
  type ScriptedServer,
  type Step as ServerStep,
} from '../helpers/scripted-server.js';
import { showState, type Provider, type State, type Step } from './model.js';
import {
  FAILURE_KINDS,
  failureStep,
  providerToolId,
  replyStep,
  TOOL,
  type FailureKind,
  type ReplayMode,
  type ReplayWire,
  type ServerName,
} from './replay-upstream.js';

export { FAILURE_KINDS, providerToolId, type FailureKind, type ReplayMode, type ServerName };

// ---------------------------------------------------------------------------------------------------
// Public shapes

/** The error each failure must end in. */
export const EXPECTED_ERROR: Readonly<Record<FailureKind, TransportErrorCode>> = {
  reset: 'MODEL_ETRANSPORT',
  timeout: 'MODEL_ETIMEOUT',
  '5xx': 'MODEL_EHTTP',
  malformed: 'MODEL_EPROTO',
};

/** What a violation breaks: a seed invariant or property, or a requirement of `DESIGN.md`. */
export type ConformanceProperty =
  | 'SelectionInv'
  | 'SelectionStable'
  | 'PairingInv'
  | 'ShapeInv'
  | 'NoProvider'
  | 'Termination'
  | 'ErrorCode'
  | 'Refinement'
  | 'Replay';

export interface ConformanceViolation {
  readonly mode: ReplayMode;
  /** Index of the behaviour in the list replayed. */
  readonly behaviour: number;
  /** Index of the step in the behaviour (0 is `Init`). */
  readonly step: number;
  readonly action: string;
  readonly property: ConformanceProperty;
  readonly message: string;
  /** The behaviour up to that step, one line per step. */
  readonly trace: string;
}

export interface ReplayReport {
  readonly mode: ReplayMode;
  /** Behaviours replayed to their end (or to the step where they diverged). */
  readonly behaviours: number;
  /** Model steps replayed and compared, `Init` included. */
  readonly steps: number;
  /** Steps per action. */
  readonly actions: Readonly<Record<string, number>>;
  /** `send` / `stream` calls made. */
  readonly exchanges: number;
  /** Requests the scripted servers received for these behaviours. */
  readonly requests: number;
  /** Provider failures scripted, per kind. */
  readonly failures: Readonly<Record<FailureKind, number>>;
  /** Observed values compared with a model variable. */
  readonly comparisons: number;
  /**
   * Exchanges failed by silence whose request never reached the server (the client's first-byte
   * deadline passed first, which a busy machine allows): their `CallerSend` had no wire to compare.
   */
  readonly unobservedSends: number;
  /**
   * Streams that handed the caller events before failing (a malformed stream starts validly). The seed
   * counts them as `ProviderFail`; our specification has `StreamFail` for them.
   */
  readonly failedAfterEvents: number;
  readonly violations: readonly ConformanceViolation[];
  readonly durationMs: number;
}

/** The two scripted upstreams every behaviour of a run shares; requests are routed by credential. */
export interface ReplayServers {
  readonly tpx: ScriptedServer;
  readonly anthropic: ScriptedServer;
  /** Requests that carried no credential of a behaviour being replayed. */
  readonly stray: readonly RecordedRequest[];
  /** Routes requests carrying `credential` to `route` (or stops routing them). */
  route(server: ServerName, credential: string, route: Route | undefined): void;
  close(): Promise<void>;
}

export interface Route {
  answer(record: RecordedRequest, server: ServerName): ServerStep;
}

export interface ReplayOptions {
  readonly mode: ReplayMode;
  /** The `tpx` provider's wire (`TPX_WIRE`). @default 'chat' */
  readonly wire?: ReplayWire;
  readonly servers: ReplayServers;
  /** Behaviours replayed at once. @default 8 */
  readonly concurrency?: number;
  /** Start no new behaviour after the first violation. @default false */
  readonly stopAtFirstViolation?: boolean;
  /** Keep at most this many violations. @default 25 */
  readonly maxViolations?: number;
  /**
   * The replay's own deadline on one exchange; passing it is a `Termination` violation. The transport's
   * deadlines are set below it. @default 12000
   */
  readonly exchangeDeadlineMs?: number;
  /**
   * The codec the checker reads `session.pending` with. The implementation's by default; a test that
   * replaces the implementation's codec passes the original here.
   */
  readonly decodeToolId?: (messagesId: string) => string;
}

// ---------------------------------------------------------------------------------------------------
// Constants of the replay

/** The first-byte deadline of an exchange the server answers with silence. */
const SILENT_FIRST_BYTE_MS = 100;
/** How long a request overtaken by that deadline may still take to reach the server. */
const LATE_ARRIVAL_MS = 1_000;
const DEFAULT_EXCHANGE_DEADLINE_MS = 12_000;

/**
 * The transport's own deadlines, below the replay's: an exchange that keeps them ends in time for the
 * replay; one that does not is a `Termination` violation. Far above a loopback answer on a busy machine.
 */
function transportDeadlines(exchangeDeadlineMs: number) {
  return {
    connectTimeoutMs: Math.round(exchangeDeadlineMs * 0.5),
    firstByteTimeoutMs: Math.round(exchangeDeadlineMs * 0.6),
    idleTimeoutMs: Math.round(exchangeDeadlineMs * 0.6),
    timeoutMs: Math.round(exchangeDeadlineMs * 0.75),
  };
}
const CLOSE_DEADLINE_MS = 1_000;

const MODEL_PROVIDER: Readonly<Record<string, Provider>> = {
  anthropic: 'ANTHROPIC',
  tpx: 'TPX',
  none: 'NONE',
};

const VARIABLE_PROPERTY: Readonly<Record<keyof State, ConformanceProperty>> = {
  hasKey: 'SelectionInv',
  hasToken: 'SelectionInv',
  provider: 'SelectionInv',
  turn: 'Refinement',
  phase: 'Refinement',
  pending: 'PairingInv',
  reqIds: 'PairingInv',
  wireShape: 'ShapeInv',
  wireIds: 'PairingInv',
  emitted: 'PairingInv',
  gotShape: 'ShapeInv',
  lastOutcome: 'Refinement',
};

const VALID_TOOL_ID = /^[A-Za-z0-9_-]+$/;

// ---------------------------------------------------------------------------------------------------
// Servers

/** Starts the two scripted upstreams, routing each request by its credential. */
export async function startReplayServers(): Promise<ReplayServers> {
  // Compiling the OpenAI schema takes a while: done here, not inside the first request's answer, where it
  // would hold the event loop while other exchanges' deadlines run.
  assertValidChatCompletionRequest({ model: 'warm-up', messages: [{ role: 'user', content: 'Hello' }] });
  const routes = new Map<string, Route>();
  const stray: RecordedRequest[] = [];
  const answerer = (server: ServerName) => (record: RecordedRequest) => {
    const credential =
      server === 'tpx'
        ? (record.headers['authorization'] ?? '').replace(/^Bearer /, '')
        : record.headers['x-api-key'];
    const route = routes.get(`${server}:${credential ?? ''}`);
    if (route === undefined) {
      stray.push(record);
      return serverStep.json(
        {
          type: 'error',
          error: { type: 'invalid_request_error', message: 'no behaviour owns this credential' },
        },
        { status: 418 },
      );
    }
    return route.answer(record, server);
  };
  const tpx = await startScriptedServer(answerer('tpx'));
  const anthropic = await startScriptedServer(answerer('anthropic'));
  return {
    tpx,
    anthropic,
    stray,
    route(server, credential, route) {
      if (route === undefined) routes.delete(`${server}:${credential}`);
      else routes.set(`${server}:${credential}`, route);
    },
    async close() {
      await Promise.all([tpx.close(), anthropic.close()]);
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The run

let runCounter = 0;

/** Replays behaviours in one mode; never throws for a divergence, reports it. */
export async function replayBehaviours(
  behaviours: readonly (readonly Step[])[],
  options: ReplayOptions,
): Promise<ReplayReport> {
  const started = Date.now();
  const runId = ++runCounter;
  const concurrency = options.concurrency ?? 8;
  const maxViolations = options.maxViolations ?? 25;
  const totals = {
    behaviours: 0,
    steps: 0,
    exchanges: 0,
    requests: 0,
    comparisons: 0,
    unobservedSends: 0,
    failedAfterEvents: 0,
    actions: {} as Record<string, number>,
    failures: { reset: 0, timeout: 0, '5xx': 0, malformed: 0 } as Record<FailureKind, number>,
  };
  const violations: ConformanceViolation[] = [];
  let next = 0;
  let stop = false;

  const worker = async (): Promise<void> => {
    while (!stop && next < behaviours.length) {
      const index = next++;
      const run = new BehaviourReplay(behaviours[index]!, index, runId, options);
      await run.replay();
      totals.behaviours++;
      totals.steps += run.stepsReplayed;
      totals.exchanges += run.exchanges;
      totals.requests += run.requests;
      totals.comparisons += run.comparisons;
      totals.unobservedSends += run.unobservedSends;
      totals.failedAfterEvents += run.failedAfterEvents;
      for (const [action, count] of Object.entries(run.actions)) {
        totals.actions[action] = (totals.actions[action] ?? 0) + count;
      }
      for (const kind of FAILURE_KINDS) totals.failures[kind] += run.failures[kind];
      for (const violation of run.violations)
        if (violations.length < maxViolations) violations.push(violation);
      if (run.violations.length > 0 && options.stopAtFirstViolation === true) stop = true;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return { mode: options.mode, ...totals, violations, durationMs: Date.now() - started };
}

type Plan = { kind: 'reply'; ids: readonly string[] } | { kind: 'fail'; failure: FailureKind };

interface Expectation {
  readonly sendIndex: number;
  readonly plan: Plan;
  readonly request: MessagesRequest;
  arrived: boolean;
  /** Whether the exchange has ended: a request arriving after that was overtaken by its deadline. */
  settled: boolean;
  /** Resolves when the request arrives. */
  readonly arrival: Promise<void>;
  readonly arrive: () => void;
  /** Provider ids the server wrote, in order. */
  written: string[];
}

interface Observation {
  readonly variable: keyof State;
  /** Where the implementation's value was read. */
  readonly source: string;
  readonly value: unknown;
}

type Outcome =
  | { settled: true; ok: true; message: Message; events: MessageStreamEvent[] }
  | { settled: true; ok: false; error: unknown; events: MessageStreamEvent[] }
  | { settled: false; events: MessageStreamEvent[] };

interface LedgerSnapshot {
  pending: readonly string[];
  turns: number;
  lastOutcome: string;
}

/** One behaviour against one fresh transport. */
class BehaviourReplay {
  readonly violations: ConformanceViolation[] = [];
  readonly actions: Record<string, number> = {};
  readonly failures: Record<FailureKind, number> = { reset: 0, timeout: 0, '5xx': 0, malformed: 0 };
  stepsReplayed = 0;
  exchanges = 0;
  requests = 0;
  comparisons = 0;
  unobservedSends = 0;
  failedAfterEvents = 0;

  readonly #steps: readonly Step[];
  readonly #index: number;
  readonly #options: ReplayOptions;
  readonly #decode: (id: string) => string;
  readonly #key: string;
  readonly #token: string;
  /** Provider id → model id, for every id a server wrote in this behaviour. */
  readonly #modelIdOf = new Map<string, string>();
  #transport: ModelTransport | undefined;
  #session: Session | undefined;
  #history: MessageParam[] = [];
  /** The tool_use ids of the last delivered answer, as the caller holds them. */
  #callerPending: string[] = [];
  #expectation: Expectation | undefined;
  #failuresSoFar = 0;
  #diverged = false;

  constructor(steps: readonly Step[], index: number, runId: number, options: ReplayOptions) {
    this.#steps = steps;
    this.#index = index;
    this.#options = options;
    this.#decode = options.decodeToolId ?? decodeToolId;
    this.#key = `sk-ant-replay-${runId}-${options.mode}-${index}`;
    this.#token = `tpx-oauth-replay-${runId}-${options.mode}-${index}`;
  }

  async replay(): Promise<void> {
    const route: Route = { answer: (record, server) => this.#answer(record, server) };
    const servers = this.#options.servers;
    try {
      this.#init();
      if (this.#hasKey) servers.route('anthropic', this.#key, route);
      if (this.#hasToken) servers.route('tpx', this.#token, route);
      for (let index = 1; index < this.#steps.length && !this.#diverged;) {
        index = await this.#replayFrom(index);
      }
    } catch (error) {
      this.#violation(
        Math.min(this.stepsReplayed, this.#steps.length - 1),
        'Replay',
        `the replay itself failed: ${describe(error)}`,
      );
    } finally {
      servers.route('anthropic', this.#key, undefined);
      servers.route('tpx', this.#token, undefined);
      const transport = this.#transport;
      if (transport !== undefined) await Promise.race([transport.close(), sleep(CLOSE_DEADLINE_MS)]);
    }
  }

  get #hasKey(): boolean {
    const first = this.#steps[0];
    return first?.action === 'Init' && first.param.hasKey;
  }

  get #hasToken(): boolean {
    const first = this.#steps[0];
    return first?.action === 'Init' && first.param.hasToken;
  }

  // -------------------------------------------------------------------------------------------------
  // Steps

  #init(): void {
    const first = this.#steps[0];
    if (first?.action !== 'Init') throw new Error('a behaviour must start with Init');
    const servers = this.#options.servers;
    const env: Record<string, string | undefined> = {
      ANTHROPIC_BASE_URL: servers.anthropic.url,
      TPX_BASE_URL: `${servers.tpx.url}/v1`,
    };
    if (first.param.hasKey) env['ANTHROPIC_API_KEY'] = this.#key;
    if (first.param.hasToken) env['TPX_OAUTH_TOKEN'] = this.#token;
    if (this.#options.wire === 'responses') env['TPX_WIRE'] = 'responses';
    let transport: ModelTransport;
    try {
      transport = createTransport({ env, maxRetries: 0, ...transportDeadlines(this.#deadline) });
    } catch (error) {
      this.#count(0);
      this.#violation(0, 'SelectionInv', `createTransport threw: ${describe(error)}`);
      return;
    }
    // SelectionStable: the credentials the transport was created from change under it; nothing may follow.
    env['ANTHROPIC_API_KEY'] = first.param.hasKey ? undefined : `${this.#key}-late`;
    env['TPX_OAUTH_TOKEN'] = first.param.hasToken ? undefined : `${this.#token}-late`;
    this.#transport = transport;
    this.#session = createSession(transport);
    this.#count(0);
    const reason = transport.selection.reason;
    if (reason.includes(this.#key) || reason.includes(this.#token)) {
      this.#violation(0, 'SelectionInv', `selection.reason shows a secret: ${JSON.stringify(reason)}`);
    }
    this.#compare(0, this.#ledger('after createSession'));
  }

  /** Replays the step at `index` (with the steps it implies) and returns the index of the next one. */
  async #replayFrom(index: number): Promise<number> {
    const current = this.#steps[index]!;
    switch (current.action) {
      case 'CallerSend':
        return this.#exchange(index);
      case 'CallerAbort':
        this.#abort(index);
        return index + 1;
      case 'NoProvider':
        await this.#noProvider(index);
        return index + 1;
      case 'Init':
      case 'ProviderReply':
      case 'ProviderFail':
      case 'Deliver':
      case 'Halted':
        throw new Error(`step ${index}: ${current.action} cannot start an exchange`);
    }
  }

  #abort(index: number): void {
    const session = this.#session!;
    const requestsBefore = this.requests;
    session.abort();
    this.#dropObligations();
    this.#count(index);
    if (this.requests !== requestsBefore) {
      this.#violation(index, 'Refinement', 'session.abort() sent a request');
    }
    this.#compare(index, this.#ledger('after session.abort()'));
  }

  async #noProvider(index: number): Promise<void> {
    const servers = this.#options.servers;
    const strayBefore = servers.stray.length;
    const request = this.#request(this.#userTurn(index));
    const outcome = await this.#call(request, {});
    this.#count(index);
    if (!outcome.settled) {
      this.#violation(
        index,
        'Termination',
        `the exchange without credentials did not settle within ${this.#deadline} ms`,
      );
      return;
    }
    if (outcome.ok) {
      this.#violation(index, 'NoProvider', 'an exchange without credentials was answered');
    } else if (
      !isTransportError(outcome.error) ||
      outcome.error.code !== 'MODEL_EAUTH' ||
      outcome.error.status !== 401
    ) {
      this.#violation(index, 'NoProvider', `expected MODEL_EAUTH (401), got ${describe(outcome.error)}`);
    }
    if (servers.stray.length !== strayBefore) {
      this.#violation(index, 'NoProvider', 'a request reached a scripted server');
    }
    this.#compare(index, [...this.#ledger('after the exchange'), ...this.#shapeOf(outcome)]);
    this.#dropObligations();
  }

  /** `CallerSend`, then `ProviderReply` + `Deliver` or `ProviderFail`: one real exchange. */
  async #exchange(sendIndex: number): Promise<number> {
    const following = this.#steps[sendIndex + 1];
    let plan: Plan;
    let endIndex: number;
    if (following?.action === 'ProviderReply') {
      if (this.#steps[sendIndex + 2]?.action !== 'Deliver')
        throw new Error(`step ${sendIndex + 2} is not Deliver`);
      plan = { kind: 'reply', ids: following.param.ids };
      endIndex = sendIndex + 2;
    } else if (following?.action === 'ProviderFail') {
      const failure = FAILURE_KINDS[(this.#index + this.#failuresSoFar++) % FAILURE_KINDS.length]!;
      this.failures[failure]++;
      plan = { kind: 'fail', failure };
      endIndex = sendIndex + 1;
    } else {
      throw new Error(`step ${sendIndex + 1} (${following?.action ?? 'none'}) cannot follow CallerSend`);
    }

    const request = this.#request(this.#userTurn(sendIndex));
    let arrive = () => {};
    const arrival = new Promise<void>((resolve) => {
      arrive = resolve;
    });
    const expectation: Expectation = {
      sendIndex,
      plan,
      request,
      arrived: false,
      settled: false,
      arrival,
      arrive,
      written: [],
    };
    this.#expectation = expectation;
    const exchangeOptions: ExchangeOptions =
      plan.kind === 'fail' && plan.failure === 'timeout' ? { firstByteTimeoutMs: SILENT_FIRST_BYTE_MS } : {};
    let snapshot: LedgerSnapshot | undefined;
    const outcome = await this.#call(request, exchangeOptions, (ledger) => {
      snapshot = ledger;
    });
    expectation.settled = true;
    if (!expectation.arrived && plan.kind === 'fail' && plan.failure === 'timeout') {
      // The first-byte deadline runs from the moment the request is sent: on a busy machine it can pass
      // before the server has read the request. The wire is still checked when it arrives late.
      await Promise.race([arrival, sleep(LATE_ARRIVAL_MS)]);
      if (!expectation.arrived) this.unobservedSends++;
    }
    this.#expectation = undefined;

    // CallerSend: compared when the request reached the server (see #answer).
    this.#count(sendIndex);
    if (!expectation.arrived && !(plan.kind === 'fail' && plan.failure === 'timeout')) {
      this.#violation(
        sendIndex,
        'Refinement',
        `the request never reached the provider (${outcome.settled ? (outcome.ok ? 'answered' : describe(outcome.error)) : 'no answer'})`,
      );
    }
    if (snapshot !== undefined && plan.kind === 'fail') {
      // A stream may hand out its first events before it fails; the seed has the exchange in `req` then.
      this.#compare(sendIndex, this.#ledgerFrom(snapshot, 'while the stream was read'));
    }

    if (!outcome.settled) {
      this.#count(endIndex);
      this.#violation(endIndex, 'Termination', `the exchange did not settle within ${this.#deadline} ms`);
      return endIndex + 1;
    }

    if (plan.kind === 'reply') {
      const replyIndex = sendIndex + 1;
      this.#count(replyIndex);
      const written = this.#modelIds(expectation.written, 'provider');
      const replyObservations: Observation[] = [
        { variable: 'emitted', source: 'tool ids the scripted provider wrote', value: written },
        { variable: 'wireIds', source: 'tool ids in the provider answer', value: written },
      ];
      if (snapshot !== undefined)
        replyObservations.push(...this.#ledgerFrom(snapshot, 'while the answer streamed'));
      if (expectation.arrived) this.#compare(replyIndex, replyObservations);
    }

    this.#count(endIndex);
    const observations = [...this.#ledger('after the exchange'), ...this.#shapeOf(outcome)];
    const result = outcome.ok ? 'ok' : 'err';
    observations.push({
      variable: 'lastOutcome',
      source: `the exchange (${outcome.ok ? 'resolved' : `rejected: ${describe(outcome.error)}`})`,
      value: result,
    });
    if (outcome.ok) {
      const delivered = outcome.message.content.flatMap((block) =>
        block.type === 'tool_use' ? [String((block as { id?: unknown }).id)] : [],
      );
      this.#checkDeliveredIds(endIndex, delivered);
      observations.push({
        variable: 'pending',
        source: 'tool_use ids delivered to the caller',
        value: this.#modelIds(delivered, 'messages'),
      });
      this.#history = [...request.messages, { role: 'assistant', content: toParams(outcome.message) }];
      this.#callerPending = delivered;
    } else {
      if (outcome.events.length > 0) this.failedAfterEvents++;
      if (
        plan.kind === 'fail' &&
        isTransportError(outcome.error) &&
        outcome.error.code !== EXPECTED_ERROR[plan.failure]
      ) {
        this.#violation(
          endIndex,
          'ErrorCode',
          `a ${plan.failure} must end in ${EXPECTED_ERROR[plan.failure]}, got ${describe(outcome.error)}`,
        );
      }
      this.#dropObligations();
    }
    this.#compare(endIndex, observations);
    return endIndex + 1;
  }

  // -------------------------------------------------------------------------------------------------
  // The scripted provider's side

  /** Answers a request of this behaviour, checking the `CallerSend` state as it arrives. */
  #answer(record: RecordedRequest, server: ServerName): ServerStep {
    this.requests++;
    const expectation = this.#expectation;
    if (expectation === undefined || expectation.arrived) {
      this.#violation(
        Math.min(this.stepsReplayed, this.#steps.length - 1),
        'Refinement',
        `an unexpected request reached the ${server} server: ${record.method} ${record.url}`,
      );
      return serverStep.json(
        { type: 'error', error: { type: 'invalid_request_error', message: 'unexpected request' } },
        { status: 418 },
      );
    }
    expectation.arrived = true;
    expectation.arrive();
    const sendIndex = expectation.sendIndex;
    const callerIds = toolResultIds(expectation.request.messages.at(-1));
    this.#compare(sendIndex, [
      // The ledger is read while the exchange runs; a request that arrives after its exchange was
      // overtaken by the deadline is checked on the wire only.
      ...(expectation.settled ? [] : this.#ledger('when the request reached the provider')),
      {
        variable: 'reqIds',
        source: "tool_result ids of the caller's request",
        value: this.#modelIds(callerIds, 'messages'),
      },
      {
        variable: 'wireShape',
        source: `the body the ${server} server received`,
        value: this.#wireShape(record, server),
      },
      ...this.#wireIds(record, server),
    ]);

    const plan = expectation.plan;
    if (plan.kind === 'fail')
      return failureStep(plan.failure, server, this.#options.mode, this.#options.wire);
    const turn = this.#steps[sendIndex]!.state.turn;
    const calls = plan.ids.map((modelId) => {
      const n = modelIdNumber(modelId);
      const id = providerToolId(server, n, turn);
      this.#modelIdOf.set(id, modelId);
      return { id, input: { q: `word ${turn}.${n}` } };
    });
    expectation.written = calls.map((call) => call.id);
    return replyStep(server, this.#options.mode, calls, `r${this.#index}t${turn}`, this.#options.wire);
  }

  #wireShape(record: RecordedRequest, server: ServerName): string {
    const body = record.json;
    const streaming = (body as { stream?: unknown } | undefined)?.stream === true;
    if (streaming !== (this.#options.mode === 'stream'))
      return `a ${streaming ? 'stream' : 'non-stream'} request`;
    if (server === 'tpx' && this.#options.wire === 'responses') {
      if (record.url !== '/v1/responses') return `a request to ${record.url}`;
      const request = body as { input?: unknown; store?: unknown; previous_response_id?: unknown };
      if (!Array.isArray(request.input) || request.store !== false || 'previous_response_id' in request) {
        return 'a Responses body without its input, or one that keeps state on the server';
      }
      return 'openai';
    }
    if (server === 'tpx') {
      if (!/\/v1\/chat\/completions$/.test(record.url)) return `a request to ${record.url}`;
      try {
        assertValidChatCompletionRequest(body);
      } catch (error) {
        return `an invalid Chat Completions body: ${describe(error).slice(0, 300)}`;
      }
      return 'openai';
    }
    if (record.url !== '/v1/messages') return `a request to ${record.url}`;
    const validated = validateMessagesRequest(body);
    return validated.ok ? 'messages' : `an invalid Messages body: ${validated.message}`;
  }

  /** The tool ids on the outbound body, as model ids. */
  #wireIds(record: RecordedRequest, server: ServerName): Observation[] {
    if (server === 'tpx' && this.#options.wire === 'responses') return this.#responsesWireIds(record);
    const messages = (record.json as { messages?: unknown } | undefined)?.messages;
    if (!Array.isArray(messages))
      return [{ variable: 'wireIds', source: 'the outbound body', value: 'no messages' }];
    if (server === 'anthropic') {
      const ids = toolResultIds(messages.at(-1) as MessageParam | undefined);
      return [
        {
          variable: 'wireIds',
          source: 'tool_use_id of the tool_result blocks on the wire',
          value: this.#modelIds(ids, 'provider'),
        },
      ];
    }
    const lastAssistant = messages.findLastIndex(
      (message: { role?: unknown }) => message.role === 'assistant',
    );
    const toolCallIds = messages
      .slice(lastAssistant + 1)
      .filter((message: { role?: unknown }) => message.role === 'tool')
      .map((message: { tool_call_id?: unknown }) => String(message.tool_call_id));
    const assistant = lastAssistant >= 0 ? (messages[lastAssistant] as { tool_calls?: unknown }) : undefined;
    const calls = Array.isArray(assistant?.tool_calls) ? (assistant.tool_calls as { id?: unknown }[]) : [];
    return [
      {
        variable: 'wireIds',
        source: 'tool_call_id of the role:"tool" messages on the wire',
        value: this.#modelIds(toolCallIds, 'provider'),
      },
      {
        variable: 'wireIds',
        source: 'tool_calls ids of the last assistant message on the wire',
        value: this.#modelIds(
          calls.map((call) => String(call.id)),
          'provider',
        ),
      },
    ];
  }

  /**
   * The Responses wire's tool ids, as model ids, read as on Chat Completions: the last assistant turn is
   * the last run of assistant items (`message` with role assistant, `reasoning`, `function_call`); its
   * calls are that run's `function_call` items, the answers the `function_call_output` items after it.
   */
  #responsesWireIds(record: RecordedRequest): Observation[] {
    const input = (record.json as { input?: unknown } | undefined)?.input;
    if (!Array.isArray(input))
      return [{ variable: 'wireIds', source: 'the outbound body', value: 'no input' }];
    const items = input as { type?: unknown; role?: unknown; call_id?: unknown }[];
    const isAssistant = (item: { type?: unknown; role?: unknown }): boolean =>
      item.type === 'function_call' ||
      item.type === 'reasoning' ||
      (item.type === 'message' && item.role === 'assistant');
    const runEnd = items.findLastIndex(isAssistant);
    const calls: string[] = [];
    for (let index = runEnd; index >= 0 && isAssistant(items[index]!); index--) {
      if (items[index]!.type === 'function_call') calls.unshift(String(items[index]!.call_id));
    }
    const outputs = items
      .slice(runEnd + 1)
      .filter((item) => item.type === 'function_call_output')
      .map((item) => String(item.call_id));
    return [
      {
        variable: 'wireIds',
        source: 'call_id of the function_call_output items on the wire',
        value: this.#modelIds(outputs, 'provider'),
      },
      {
        variable: 'wireIds',
        source: 'call_id of the last function_call items on the wire',
        value: this.#modelIds(calls, 'provider'),
      },
    ];
  }

  // -------------------------------------------------------------------------------------------------
  // The caller's side

  #request(turnMessage: MessageParam): MessagesRequest {
    return {
      model: 'claude-replay',
      max_tokens: 256,
      tools: [TOOL],
      messages: [...this.#history, turnMessage],
    };
  }

  /** The caller's next user turn: one tool_result per pending tool_use, or a question. */
  #userTurn(index: number): MessageParam {
    if (this.#callerPending.length === 0)
      return { role: 'user', content: `Question ${index}: what does it mean?` };
    return {
      role: 'user',
      content: this.#callerPending.map((id) => ({
        type: 'tool_result',
        tool_use_id: id,
        content: `definition for ${id.slice(0, 24)}`,
      })),
    };
  }

  /**
   * After a failure or an abort the obligations are gone: a caller keeps a history that ends with a
   * plain answer, and starts a new conversation otherwise.
   */
  #dropObligations(): void {
    this.#callerPending = [];
    const last = this.#history.at(-1);
    const endsCleanly =
      last?.role === 'assistant' &&
      (typeof last.content === 'string' || !last.content.some((block) => block.type === 'tool_use'));
    if (!endsCleanly) this.#history = [];
  }

  /** One `send` or `stream` through the session, under the replay's deadline. */
  async #call(
    request: MessagesRequest,
    options: ExchangeOptions,
    onFirstEvent?: (ledger: LedgerSnapshot) => void,
  ): Promise<Outcome> {
    const session = this.#session!;
    this.exchanges++;
    const events: MessageStreamEvent[] = [];
    const run = async (): Promise<Outcome> => {
      try {
        if (this.#options.mode === 'send') {
          const message = await session.send(request, options);
          return { settled: true, ok: true, message, events };
        }
        for await (const event of session.stream(request, options)) {
          if (events.length === 0)
            onFirstEvent?.({
              pending: [...session.pending],
              turns: session.turns,
              lastOutcome: session.lastOutcome,
            });
          events.push(event);
        }
        return { settled: true, ok: true, message: accumulateStream(events), events };
      } catch (error) {
        return { settled: true, ok: false, error, events };
      }
    };
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<Outcome>((resolve) => {
      timer = setTimeout(() => resolve({ settled: false, events }), this.#deadline);
    });
    try {
      return await Promise.race([run(), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  get #deadline(): number {
    return this.#options.exchangeDeadlineMs ?? DEFAULT_EXCHANGE_DEADLINE_MS;
  }

  // -------------------------------------------------------------------------------------------------
  // Observations and comparison

  #ledger(when: string): Observation[] {
    const transport = this.#transport!;
    const session = this.#session!;
    return [
      {
        variable: 'provider',
        source: `transport.provider ${when}`,
        value: MODEL_PROVIDER[transport.provider] ?? transport.provider,
      },
      {
        variable: 'provider',
        source: `transport.selection.provider ${when}`,
        value: MODEL_PROVIDER[transport.selection.provider] ?? transport.selection.provider,
      },
      ...this.#ledgerFrom(
        { pending: session.pending, turns: session.turns, lastOutcome: session.lastOutcome },
        when,
      ),
    ];
  }

  #ledgerFrom(ledger: LedgerSnapshot, when: string): Observation[] {
    return [
      { variable: 'turn', source: `session.turns ${when}`, value: ledger.turns },
      { variable: 'lastOutcome', source: `session.lastOutcome ${when}`, value: ledger.lastOutcome },
      {
        variable: 'pending',
        source: `session.pending ${when}, decoded`,
        value: this.#modelIds(ledger.pending, 'messages'),
      },
    ];
  }

  /** What the caller got, as the model's `gotShape`. */
  #shapeOf(outcome: Outcome): Observation[] {
    if (!outcome.settled) return [];
    const observations: Observation[] = [];
    if (this.#options.mode === 'stream' || outcome.events.length > 0) {
      observations.push({
        variable: 'gotShape',
        source: 'the stream events',
        value: eventsShape(outcome.events, outcome.ok),
      });
    }
    if (outcome.ok)
      observations.push({
        variable: 'gotShape',
        source: 'the message',
        value: messageShape(outcome.message),
      });
    else observations.push({ variable: 'gotShape', source: 'the error', value: errorShape(outcome.error) });
    return observations;
  }

  /** Delivered ids must be valid Messages ids, and distinct. */
  #checkDeliveredIds(index: number, ids: readonly string[]): void {
    const invalid = ids.filter((id) => !VALID_TOOL_ID.test(id));
    if (invalid.length > 0)
      this.#violation(index, 'ShapeInv', `invalid tool_use ids delivered: ${invalid.map(short).join(', ')}`);
    if (new Set(ids).size !== ids.length)
      this.#violation(index, 'PairingInv', `duplicate tool_use ids delivered: ${ids.map(short).join(', ')}`);
  }

  /** Messages ids (decoded with the codec on the tpx path) or provider ids, as sorted model ids. */
  #modelIds(ids: readonly string[], kind: 'messages' | 'provider'): string[] {
    const decode = kind === 'messages' && this.#transport?.provider === 'tpx';
    return ids
      .map((id) => {
        const providerId = decode ? this.#decode(id) : id;
        return this.#modelIdOf.get(providerId) ?? `?${short(providerId)}`;
      })
      .sort();
  }

  #compare(index: number, observations: readonly Observation[]): void {
    const state = this.#steps[index]!.state;
    for (const observation of observations) {
      this.comparisons++;
      const expected = state[observation.variable];
      if (JSON.stringify(expected) === JSON.stringify(observation.value)) continue;
      this.#violation(
        index,
        VARIABLE_PROPERTY[observation.variable],
        `${observation.variable}: the model has ${format(expected)}, ${observation.source} gives ${format(observation.value)}`,
      );
    }
  }

  #count(index: number): void {
    const action = this.#steps[index]!.action;
    this.actions[action] = (this.actions[action] ?? 0) + 1;
    this.stepsReplayed++;
  }

  #violation(index: number, property: ConformanceProperty, message: string): void {
    this.#diverged = true;
    const step = this.#steps[index];
    this.violations.push({
      mode: this.#options.mode,
      behaviour: this.#index,
      step: index,
      action: step?.action ?? '?',
      property,
      message,
      trace: this.#steps
        .slice(0, index + 1)
        .map((each, position) => {
          const param = each.param === null ? '' : ` ${JSON.stringify(each.param)}`;
          return `  ${position}. ${each.action}${param}: ${showState(each.state)}`;
        })
        .join('\n'),
    });
  }
}

// ---------------------------------------------------------------------------------------------------
// Shapes

function isChatShaped(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return (
    'choices' in record ||
    record['object'] === 'chat.completion' ||
    record['object'] === 'chat.completion.chunk'
  );
}

/** `messages` for a valid Messages `message`, `openai` for a Chat Completions body, else why not. */
export function messageShape(value: unknown): string {
  if (isChatShaped(value)) return 'openai';
  const validated = validateMessage(value);
  return validated.ok ? 'messages' : `an invalid message: ${validated.message}`;
}

/** `messages` when every event is a valid Messages event in protocol order (and, if complete, builds a valid message). */
export function eventsShape(events: readonly unknown[], complete: boolean): string {
  const grammar = createStreamGrammar();
  for (const [position, event] of events.entries()) {
    if (isChatShaped(event)) return 'openai';
    const validated = validateStreamEvent(event);
    if (!validated.ok) return `an invalid event #${position}: ${validated.message}`;
    const violation = grammar.accept(validated.value);
    if (violation !== undefined) return `events out of order at #${position}: ${violation}`;
  }
  if (!complete) return 'messages';
  const end = grammar.end();
  if (end !== undefined) return `an unfinished stream: ${end}`;
  try {
    return messageShape(accumulateStream(events as MessageStreamEvent[]));
  } catch (error) {
    return `events that build no message: ${describe(error)}`;
  }
}

/** `messages` for a `TransportError` whose body is a Messages error body. */
export function errorShape(error: unknown): string {
  if (!isTransportError(error)) return `an untyped error: ${describe(error)}`;
  const body: unknown = error.body;
  if (isChatShaped(body)) return 'openai';
  const validated = validateStreamEvent(body);
  return validated.ok && (body as { type?: unknown }).type === 'error'
    ? 'messages'
    : `an invalid error body: ${format(body)}`;
}

// ---------------------------------------------------------------------------------------------------
// Small helpers

function toolResultIds(message: MessageParam | undefined): string[] {
  if (message === undefined || message.role !== 'user' || typeof message.content === 'string') return [];
  return message.content.flatMap((block) =>
    block.type === 'tool_result' && typeof block['tool_use_id'] === 'string' ? [block['tool_use_id']] : [],
  );
}

/** A delivered message as the content of the assistant turn the caller sends back. */
function toParams(message: Message): ContentBlockParam[] {
  return message.content.flatMap((block): ContentBlockParam[] => {
    if (block.type === 'text') return [{ type: 'text', text: (block as { text: string }).text }];
    if (block.type === 'tool_use') {
      const toolUse = block as { id: string; name: string; input: Record<string, unknown> };
      return [{ type: 'tool_use', id: toolUse.id, name: toolUse.name, input: toolUse.input }];
    }
    return [];
  });
}

/** The number of a model id: 1 for `t1`, 2 for `t2`, … */
function modelIdNumber(modelId: string): number {
  const n = Number(/^t(\d+)$/.exec(modelId)?.[1]);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`model tool ids are t1, t2, …; got ${JSON.stringify(modelId)}`);
  return n;
}

function short(text: string): string {
  return text.length > 48 ? `${text.slice(0, 45)}…(${text.length})` : text;
}

function format(value: unknown): string {
  if (Array.isArray(value)) return `{${value.map((item) => short(String(item))).join(', ')}}`;
  if (typeof value === 'string')
    return JSON.stringify(value.length > 400 ? `${value.slice(0, 400)}…` : value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

function describe(error: unknown): string {
  if (isTransportError(error)) return `${error.code} (${error.status}): ${error.message}`;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** One line per violation, with its trace: for test failure messages. */
export function formatViolations(violations: readonly ConformanceViolation[]): string {
  return violations
    .map(
      (violation) =>
        `[${violation.mode}] behaviour ${violation.behaviour}, step ${violation.step} (${violation.action}): ` +
        `${violation.property}: ${violation.message}\n${violation.trace}`,
    )
    .join('\n\n');
}
