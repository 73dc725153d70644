/**
 * Runs the fault modes of `fault-modes.ts` through the library (`send`, `stream`) and through
 * `tpx serve` with the official SDK as the client, and checks each run: the outcome the table expects,
 * within its deadline, valid Messages values only, no unhandled rejection, and — after a short settle —
 * no socket or referenced timer left behind (`process.getActiveResourcesInfo()`).
 *
 * Keep-alive is off on both hops so that a settled case holds no socket at all: the scripted upstream
 * answers with `connection: close`, and the SDK's dispatcher has `pipelining: 0`.
 *
 * @module
 */
import Anthropic, { type ClientOptions } from '@anthropic-ai/sdk';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch, request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTransport,
  isTransportError,
  validateMessage,
  validateStreamEvent,
  type Message,
  type MessagesRequest,
  type MessageStreamEvent,
  type ModelTransport,
  type TransportOptions,
} from '../../src/index.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { createStreamGrammar } from '../../src/protocol/stream-grammar.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import {
  startScriptedServer,
  step,
  type RecordedRequest,
  type ScriptedServer,
  type Step,
} from '../helpers/scripted-server.js';
import { ANSWER_TEXT, faultRequest, goodBody, goodFrames, type UpstreamKind } from './fault-bodies.js';
import {
  DEADLINE_PROFILES,
  FAULT_MODES,
  RESPONSE_LIMIT_BYTES,
  appliesTo,
  expectedOutcome,
  textOf,
  type DeadlineProfile,
  type EntryPoint,
  type FaultMode,
  type Outcome,
} from './fault-modes.js';
import { HOSTILE_CASES, type HostileCase } from './hostile-cases.js';

/** Start-up credentials of the transports under test; they must never reach a caller. */
export const UPSTREAM_KEY = 'sk-ant-fault-suite-upstream-key-7f3a';
export const UPSTREAM_TOKEN = 'tpx-fault-suite-oauth-token-91c2';
/** What the SDK presents to the proxy; it must never go upstream. */
const CLIENT_KEY = 'sk-ant-fault-suite-client-key-never-forwarded';
/** The model name of the request that checks the proxy still serves after a fault. */
const FOLLOW_UP_MODEL = 'follow-up';
/** Time allowed past a deadline for the failure to reach the caller (scheduling on a busy machine). */
const DEADLINE_SLACK_MS = 750;
/** How long a case may take to give back its sockets and timers. */
const SETTLE_MS = 2_000;

// ---------------------------------------------------------------------------------------------------
// Resources

interface ResourceCounts {
  sockets: number;
  timers: number;
}

function resourceCounts(): ResourceCounts {
  let sockets = 0;
  let timers = 0;
  for (const name of process.getActiveResourcesInfo()) {
    if (name === 'TCPSocketWrap') sockets++;
    else if (name === 'Timeout') timers++;
  }
  return { sockets, timers };
}

/** Waits until no more sockets and timers are active than `before`; returns what is still left over. */
async function settle(before: ResourceCounts): Promise<string[]> {
  const deadline = Date.now() + SETTLE_MS;
  const started = Date.now();
  for (;;) {
    const now = resourceCounts();
    const left: string[] = [];
    if (now.sockets > before.sockets) left.push(`${now.sockets - before.sockets} TCPSocketWrap`);
    if (now.timers > before.timers) left.push(`${now.timers - before.timers} Timeout`);
    if (left.length === 0 || Date.now() >= deadline) return left;
    // Sockets close within a few turns of the event loop; after that, poll less often.
    if (Date.now() - started < 20) await new Promise((resolve) => setImmediate(resolve));
    else await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Resolves with `promise`, or rejects naming `what` when it takes longer than `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A port on 127.0.0.1 that nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---------------------------------------------------------------------------------------------------
// The scripted upstream, switched from case to case

interface CaseUpstream {
  server: ScriptedServer;
  /** Sets the script of the next case and resets its request count. */
  begin(script: (attempt: number, record: RecordedRequest) => Step): void;
  /** Upstream requests of the current case (follow-ups not counted). */
  attempts(): number;
  /** Requests of the current case, follow-ups not included. */
  caseRequests(): RecordedRequest[];
}

async function startCaseUpstream(provider: UpstreamKind): Promise<CaseUpstream> {
  let script: ((attempt: number, record: RecordedRequest) => Step) | undefined;
  let records: RecordedRequest[] = [];
  const server = await startScriptedServer((record) => {
    const body = record.json as { model?: unknown; stream?: unknown } | undefined;
    if (body?.model === FOLLOW_UP_MODEL) {
      return body.stream === true
        ? step.sse(goodFrames(provider), { headers: { connection: 'close' } })
        : step.json(goodBody(provider), { headers: { connection: 'close' } });
    }
    records.push(record);
    return script?.(records.length - 1, record) ?? step.text(418, 'no script', { connection: 'close' });
  });
  return {
    server,
    begin(next) {
      script = next;
      records = [];
    },
    attempts: () => records.length,
    caseRequests: () => records,
  };
}

function upstreamLog(upstream: CaseUpstream): string[] {
  return upstream
    .caseRequests()
    .map(
      (record) => `#${record.index} ${record.method} ${record.url}${record.aborted ? ' (client left)' : ''}`,
    );
}

/**
 * The official SDK, sending through `agent` (undici's own fetch with that dispatcher), so that a test
 * decides how connections are pooled and can close them all.
 */
export function sdkOverAgent(agent: Agent, options: ClientOptions): Anthropic {
  const fetchThroughAgent = (
    input: Parameters<typeof undiciFetch>[0],
    init?: Parameters<typeof undiciFetch>[1],
  ) => undiciFetch(input, { ...init, dispatcher: agent });
  // undici's Request and Response are the platform's own, typed separately from the DOM's.
  return new Anthropic({ ...options, fetch: fetchThroughAgent as unknown as ClientOptions['fetch'] });
}

function credentials(provider: UpstreamKind, baseUrl: string): TransportOptions {
  return provider === 'anthropic'
    ? { anthropicApiKey: UPSTREAM_KEY, anthropicBaseUrl: baseUrl }
    : { tpxToken: UPSTREAM_TOKEN, tpxBaseUrl: `${baseUrl}/v1` };
}

function transportOptions(
  provider: UpstreamKind,
  baseUrl: string,
  profile: DeadlineProfile,
  sleeps: number[],
): TransportOptions {
  return {
    env: {},
    ...credentials(provider, baseUrl),
    ...DEADLINE_PROFILES[profile],
    maxRetries: 1,
    maxResponseBytes: RESPONSE_LIMIT_BYTES,
    random: () => 0,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Observations

/** What a run ended in, as the caller saw it. */
export type Observed =
  | { kind: 'message'; message: Message }
  | {
      kind: 'error';
      /** The `MODEL_*` code (library runs only: the proxy's client sees status and type). */
      code: string | undefined;
      /** HTTP-like status; `undefined` for an `event: error` after a proxy stream started. */
      status: number | undefined;
      type: string;
      afterEvents: boolean;
      deadline: string | undefined;
      message: string;
      headers: Record<string, string>;
    }
  | { kind: 'broken'; detail: string };

export interface Observation {
  mode: string;
  provider: UpstreamKind;
  entry: EntryPoint;
  via: 'library' | 'proxy';
  observed: Observed;
  attempts: number | undefined;
  /** What the upstream saw of the case, for failure messages (not in the report). */
  upstreamLog?: string[];
  /** Whether the case met its expectation; the report is written only when all did. */
  passed?: boolean;
}

function describeThrown(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** Folds and checks a stream's events: each valid, in grammatical order; complete when `complete`. */
function checkEvents(events: readonly unknown[], complete: boolean): Message | undefined {
  const grammar = createStreamGrammar();
  for (const event of events) {
    const validated = validateStreamEvent(event);
    expect(validated.ok, validated.ok ? '' : validated.message).toBe(true);
    const violation = grammar.accept(event as MessageStreamEvent);
    expect(violation).toBeUndefined();
  }
  if (!complete) return undefined;
  expect(grammar.end()).toBeUndefined();
  return accumulateStream(events as MessageStreamEvent[]);
}

async function observeLibrary(
  transport: ModelTransport,
  entry: EntryPoint,
  request: MessagesRequest,
): Promise<Observed> {
  const events: MessageStreamEvent[] = [];
  let failure: { error: unknown } | undefined;
  try {
    if (entry === 'send') return { kind: 'message', message: await transport.send(request) };
    for await (const event of transport.stream({ ...request, stream: true })) events.push(event);
  } catch (error) {
    failure = { error };
  }
  // Checked outside the try: a stream the transport called complete must fold into a message.
  if (failure === undefined) return { kind: 'message', message: checkEvents(events, true)! };
  const { error } = failure;
  if (!isTransportError(error))
    return { kind: 'broken', detail: `not a TransportError: ${describeThrown(error)}` };
  checkEvents(events, false);
  return {
    kind: 'error',
    code: error.code,
    status: error.status,
    type: error.body.error.type,
    afterEvents: events.length > 0,
    deadline: error.deadline,
    message: error.message,
    headers: { ...error.headers },
  };
}

function headerRecord(headers: Headers | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  headers?.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

function sdkError(error: unknown, afterEvents: boolean): Observed {
  if (!(error instanceof Anthropic.APIError)) return { kind: 'broken', detail: describeThrown(error) };
  if (error instanceof Anthropic.APIConnectionError) return { kind: 'broken', detail: describeThrown(error) };
  const body = error.error as { type?: unknown; error?: { type?: unknown; message?: unknown } } | undefined;
  // The proxy's error answers are Messages error bodies, before and after a stream started.
  expect(body?.type).toBe('error');
  expect(typeof body?.error?.message).toBe('string');
  return {
    kind: 'error',
    code: undefined,
    status: error.status,
    type: String(body?.error?.type),
    afterEvents,
    deadline: undefined,
    message: String(body?.error?.message),
    headers: headerRecord(error.headers),
  };
}

async function observeProxy(
  client: Anthropic,
  entry: EntryPoint,
  request: MessagesRequest,
): Promise<Observed> {
  if (entry === 'send') {
    try {
      const params = { ...request, stream: false } as Anthropic.MessageCreateParamsNonStreaming;
      return { kind: 'message', message: (await client.messages.create(params)) as unknown as Message };
    } catch (error) {
      return sdkError(error, false);
    }
  }
  const events: unknown[] = [];
  try {
    const stream = await client.messages.create({
      ...request,
      stream: true,
    } as Anthropic.MessageCreateParamsStreaming);
    for await (const event of stream) events.push(event);
  } catch (error) {
    checkEvents(events, false);
    return sdkError(error, events.length > 0);
  }
  return { kind: 'message', message: checkEvents(events, true)! };
}

// ---------------------------------------------------------------------------------------------------
// Expectations

/** The proxy outcome that follows from a library outcome. */
function expectedAtProxy(outcome: Outcome): { status: number | undefined; afterEvents: boolean } {
  if (outcome.kind === 'message') return { status: 200, afterEvents: false };
  return outcome.afterEvents === true
    ? { status: undefined, afterEvents: true }
    : { status: outcome.status, afterEvents: false };
}

function checkObservation(
  mode: FaultMode,
  observation: Observation,
  provider: UpstreamKind,
  sleeps: number[],
): void {
  const expected = expectedOutcome(mode, provider, observation.entry);
  const { observed } = observation;
  const label = `${mode.name} (${provider}, ${observation.entry}, ${observation.via}: ${formatObserved(observation)}; upstream saw ${JSON.stringify(observation.upstreamLog ?? [])})`;
  if (observed.kind === 'broken') expect.fail(`${label}: ${observed.detail}`);
  if (expected.kind === 'message') {
    if (observed.kind !== 'message')
      expect.fail(`${label}: expected a message, got ${formatObserved(observation)}`);
    const validated = validateMessage(observed.message);
    expect(validated.ok, validated.ok ? '' : validated.message).toBe(true);
    if (mode.checkMessage !== undefined) mode.checkMessage(observed.message, provider);
    else expect(textOf(observed.message)).toBe(ANSWER_TEXT);
    expect(observation.attempts, `${label}: attempts`).toBe(expected.attempts ?? 1);
    return;
  }
  if (observed.kind !== 'error') expect.fail(`${label}: expected ${expected.code}, got a message`);
  expect(observed.type, label).toBe(expected.type);
  expect(observed.message, label).not.toBe('');
  if (observation.via === 'library') {
    expect(observed.code, label).toBe(expected.code);
    expect(observed.status, label).toBe(expected.status);
    expect(observed.afterEvents, `${label}: events before the error`).toBe(expected.afterEvents ?? false);
    if (expected.deadline !== undefined) expect(observed.deadline, label).toBe(expected.deadline);
  } else {
    const atProxy = expectedAtProxy(expected);
    expect(observed.status, `${label}: HTTP status`).toBe(atProxy.status);
    expect(observed.afterEvents, `${label}: events before the error`).toBe(atProxy.afterEvents);
    if (!atProxy.afterEvents) {
      for (const [name, value] of Object.entries(mode.passedBack ?? {}))
        expect(observed.headers[name], label).toBe(value);
    }
  }
  if (expected.attempts !== undefined)
    expect(observation.attempts, `${label}: attempts`).toBe(expected.attempts);
  // What the report will say of this run is what the expectation says: the report's test compares
  // docs/reliability.md with the expectations, so every cell there is one this suite observed.
  expect(formatObserved(observation), label).toBe(
    formatExpected(mode, provider, observation.entry, observation.via),
  );
  // Whatever happened upstream, the secrets of this process are not in what the caller sees.
  for (const secret of [UPSTREAM_KEY, UPSTREAM_TOKEN, CLIENT_KEY])
    expect(observed.message).not.toContain(secret);
  mode.checkSleeps?.(sleeps);
}

// ---------------------------------------------------------------------------------------------------
// Formatting, for the report

function attemptsSuffix(observation: Observation): string {
  return observation.attempts !== undefined && observation.attempts > 1
    ? ` (${observation.attempts} attempts)`
    : '';
}

/**
 * The report cell a mode's expectation stands for: what `formatObserved` gives for a run that meets it,
 * which the suite asserts of every run.
 */
export function formatExpected(
  mode: FaultMode,
  provider: UpstreamKind,
  entry: EntryPoint,
  via: Observation['via'],
): string {
  const expected = expectedOutcome(mode, provider, entry);
  const base = { mode: mode.name, provider, entry, via };
  if (expected.kind === 'message') {
    // The message itself is not shown in a cell.
    const observed = { kind: 'message', message: undefined as unknown as Message } as const;
    return formatObserved({ ...base, observed, attempts: expected.attempts ?? 1 });
  }
  const atProxy = expectedAtProxy(expected);
  const observed: Observed = {
    kind: 'error',
    code: via === 'library' ? expected.code : undefined,
    status: via === 'library' ? expected.status : atProxy.status,
    type: expected.type,
    afterEvents: via === 'library' ? (expected.afterEvents ?? false) : atProxy.afterEvents,
    deadline: expected.deadline,
    message: '',
    headers: {},
  };
  return formatObserved({ ...base, observed, attempts: expected.attempts });
}

export function formatObserved(observation: Observation): string {
  const { observed, via, entry } = observation;
  switch (observed.kind) {
    case 'broken':
      return `BROKEN: ${observed.detail}`;
    case 'message': {
      const text =
        via === 'library' ? 'message' : entry === 'send' ? '200 message' : '200 stream to message_stop';
      return `${text}${attemptsSuffix(observation)}`;
    }
    case 'error': {
      const deadline = observed.deadline !== undefined ? ` [${observed.deadline}]` : '';
      let text: string;
      if (via === 'library') {
        text = `${observed.afterEvents ? 'events, then ' : ''}${observed.code ?? '?'} ${observed.status ?? '?'} ${observed.type}${deadline}`;
      } else {
        text = observed.afterEvents
          ? `200 events, then event: error ${observed.type}`
          : `HTTP ${observed.status ?? '?'} ${observed.type}`;
      }
      return `${text}${attemptsSuffix(observation)}`;
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Running one provider's modes

const ENTRY_POINTS: readonly EntryPoint[] = ['send', 'stream'];

interface ProxyUnderTest {
  server: RunningServer;
  transport: ModelTransport;
  sleeps: number[];
  sdk: Anthropic;
}

/**
 * Defines the fault tests for one provider: every applicable mode, both entry points, through the
 * library and through `tpx serve`. Observations are kept for the report.
 */
export function defineFaultSuite(provider: UpstreamKind): void {
  const modes = FAULT_MODES.filter((mode) => appliesTo(mode, provider));
  const observations: Observation[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  let upstream: CaseUpstream;
  let refusedUrl: string;
  const proxies = new Map<string, ProxyUnderTest>();
  const agent = new Agent({ pipelining: 0 });

  function sdkFor(url: string): Anthropic {
    return sdkOverAgent(agent, { baseURL: url, apiKey: CLIENT_KEY, maxRetries: 0, timeout: 10_000 });
  }

  /** One plain Messages request to the proxy (cheaper than going through the SDK again). */
  async function followUp(url: string): Promise<{ status: number; text: string }> {
    const response = await undiciRequest(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': CLIENT_KEY },
      body: JSON.stringify(faultRequest(FOLLOW_UP_MODEL)),
      dispatcher: agent,
    });
    const body = (await response.body.json()) as Message;
    return { status: response.statusCode, text: response.statusCode === 200 ? textOf(body) : '' };
  }

  async function proxyFor(profile: DeadlineProfile, refused: boolean): Promise<ProxyUnderTest> {
    const key = `${profile}:${refused}`;
    let proxy = proxies.get(key);
    if (proxy === undefined) {
      const sleeps: number[] = [];
      const transport = createTransport(
        transportOptions(provider, refused ? refusedUrl : upstream.server.url, profile, sleeps),
      );
      const server = await startServer({ transport, port: 0, logger: false, shutdownGraceMs: 0 });
      proxy = { server, transport, sleeps, sdk: sdkFor(server.url) };
      proxies.set(key, proxy);
    }
    return proxy;
  }

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    upstream = await startCaseUpstream(provider);
    refusedUrl = `http://127.0.0.1:${await closedPort()}`;
    // One good exchange of each kind first, so that no case pays for loading and compiling code.
    const sleeps: number[] = [];
    const warm = createTransport(transportOptions(provider, upstream.server.url, 'patient', sleeps));
    for (const entry of ENTRY_POINTS) {
      upstream.begin((_attempt, record) =>
        (record.json as { stream?: unknown }).stream === true
          ? step.sse(goodFrames(provider), { headers: { connection: 'close' } })
          : step.json(goodBody(provider), { headers: { connection: 'close' } }),
      );
      expect((await observeLibrary(warm, entry, faultRequest())).kind).toBe('message');
    }
    await warm.close();
  });

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    for (const proxy of proxies.values()) {
      await proxy.server.close();
      await proxy.transport.close();
    }
    await agent.destroy();
    await upstream.server.close();
    saveObservations(provider, observations);
  });

  function beginCase(mode: FaultMode, entry: EntryPoint): void {
    const script = mode.script;
    upstream.begin((attempt) =>
      script === undefined
        ? step.text(418, 'unused', { connection: 'close' })
        : script({ provider, stream: entry === 'stream', attempt }),
    );
  }

  describe(`${provider}: through the library`, () => {
    for (const mode of modes) {
      for (const entry of ENTRY_POINTS) {
        it(`${mode.name}: ${entry}`, async () => {
          const profile = mode.profile ?? 'standard';
          const before = resourceCounts();
          beginCase(mode, entry);
          const sleeps: number[] = [];
          const transport = createTransport(
            transportOptions(
              provider,
              mode.refused === true ? refusedUrl : upstream.server.url,
              profile,
              sleeps,
            ),
          );
          const startedAt = performance.now();
          const observed = await observeLibrary(transport, entry, faultRequest());
          const elapsedMs = performance.now() - startedAt;
          const leftOver = await settle(before);
          await within(transport.close(), 2_000, 'transport.close()');
          const observation: Observation = {
            mode: mode.name,
            provider,
            entry,
            via: 'library',
            observed,
            attempts: mode.refused === true ? undefined : upstream.attempts(),
            upstreamLog: upstreamLog(upstream),
          };
          observations.push(observation);
          checkObservation(mode, observation, provider, sleeps);
          expect(elapsedMs).toBeLessThan(DEADLINE_PROFILES[profile].timeoutMs + DEADLINE_SLACK_MS);
          expect(leftOver, 'sockets or timers left after the case').toEqual([]);
          expect(unhandled).toEqual([]);
          observation.passed = true;
        });
      }
    }
  });

  describe(`${provider}: through tpx serve, with the official SDK`, () => {
    for (const mode of modes) {
      for (const entry of ENTRY_POINTS) {
        it(`${mode.name}: ${entry === 'send' ? 'JSON' : 'SSE'}`, async () => {
          const profile = mode.profile ?? 'standard';
          const proxy = await proxyFor(profile, mode.refused === true);
          const { sdk } = proxy;
          const before = resourceCounts();
          beginCase(mode, entry);
          proxy.sleeps.length = 0;
          const startedAt = performance.now();
          const observed = await observeProxy(sdk, entry, faultRequest());
          const elapsedMs = performance.now() - startedAt;
          const attempts = mode.refused === true ? undefined : upstream.attempts();
          const sleeps = [...proxy.sleeps];
          for (const recorded of upstream.caseRequests()) {
            expect(recorded.headers['x-api-key'] ?? '').not.toContain(CLIENT_KEY);
            expect(recorded.headers['authorization'] ?? '').not.toContain(CLIENT_KEY);
          }

          // The same proxy answers the next request as if nothing had happened.
          const next = await followUp(proxy.server.url);
          if (mode.refused === true) expect(next.status).toBe(502);
          else expect(next).toEqual({ status: 200, text: ANSWER_TEXT });

          const leftOver = await settle(before);
          const observation: Observation = {
            mode: mode.name,
            provider,
            entry,
            via: 'proxy',
            observed,
            attempts,
            upstreamLog: upstreamLog(upstream),
          };
          observations.push(observation);
          checkObservation(mode, observation, provider, sleeps);
          expect(elapsedMs).toBeLessThan(DEADLINE_PROFILES[profile].timeoutMs + DEADLINE_SLACK_MS);
          expect(leftOver, 'sockets or timers left after the case').toEqual([]);
          expect(unhandled).toEqual([]);
          observation.passed = true;
        });
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------------
// The report: docs/reliability.md, written from the observations when TPX_WRITE_RELIABILITY=1

const REPORT_PATH = new URL('../../docs/reliability.md', import.meta.url);
const PROVIDERS: readonly UpstreamKind[] = ['anthropic', 'tpx'];

/** Where each provider's run leaves its observations for the other to merge (one directory per test run). */
function partialPath(provider: UpstreamKind): string {
  return join(tmpdir(), `tpx-reliability-${process.ppid}`, `${provider}.json`);
}

/**
 * Keeps one provider's observations; once both providers' are there, writes the report. The two suites
 * run in separate workers, so whichever finishes second sees both files and writes the report.
 */
function saveObservations(provider: UpstreamKind, observations: readonly Observation[]): void {
  if (process.env['TPX_WRITE_RELIABILITY'] !== '1') return;
  const path = partialPath(provider);
  mkdirSync(join(path, '..'), { recursive: true });
  const complete =
    observations.length > 0 && observations.every((observation) => observation.passed === true);
  // A failing run says nothing reliable: it leaves the report as it was.
  writeFileSync(
    path,
    JSON.stringify(
      complete ? observations.map(({ upstreamLog: _log, passed: _passed, ...kept }) => kept) : null,
    ),
  );
  const all: Observation[] = [];
  for (const other of PROVIDERS) {
    const otherPath = partialPath(other);
    if (!existsSync(otherPath)) return;
    const theirs = JSON.parse(readFileSync(otherPath, 'utf8')) as Observation[] | null;
    if (theirs === null) return;
    all.push(...theirs);
  }
  writeFileSync(REPORT_PATH, renderReport(all));
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** Counts of outcomes per entry point, e.g. `message` 20, `MODEL_ETIMEOUT` 7. */
function countsByOutcome(observations: readonly Observation[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const observation of observations) {
    const { observed } = observation;
    let key: string;
    if (observed.kind === 'message') key = 'delivered message';
    else if (observed.kind === 'broken') key = 'BROKEN';
    else if (observation.via === 'library') key = observed.code ?? '?';
    else key = observed.afterEvents ? 'event: error after events' : 'HTTP error status';
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

function renderReport(observations: readonly Observation[]): string {
  const find = (mode: string, provider: UpstreamKind, entry: EntryPoint, via: Observation['via']) =>
    observations.find(
      (observation) =>
        observation.mode === mode &&
        observation.provider === provider &&
        observation.entry === entry &&
        observation.via === via,
    );
  const lines: string[] = [];
  const profiles = Object.entries(DEADLINE_PROFILES).map(
    ([name, profile]) =>
      `- \`${name}\`: connect ${profile.connectTimeoutMs} ms, first byte ${profile.firstByteTimeoutMs} ms, idle ${profile.idleTimeoutMs} ms, total ${profile.timeoutMs} ms`,
  );
  lines.push(
    '# Reliability: what the caller sees when the upstream misbehaves',
    '',
    '<!-- Generated by `TPX_WRITE_RELIABILITY=1 npx vitest run test/faults` from the outcomes the fault suite',
    '     observed. Do not edit by hand: change `test/faults/fault-modes.ts` and regenerate. -->',
    '',
    `The fault suite (\`test/faults/\`) puts a scripted upstream in front of the transport and makes it misbehave in`,
    `${FAULT_MODES.length} ways. Each mode runs for both providers — \`anthropic\` (native Messages) and \`tpx\``,
    "(OpenAI-compatible, translated) — and through four entry points: the library's `send` and `stream`, and",
    '`tpx serve` answering the official `@anthropic-ai/sdk` (SDK retries off) with JSON and with SSE.',
    '',
    'Every run must end within its total deadline (plus scheduling slack) in a delivered message or the right',
    'typed error, with every event and message valid Messages protocol, leave no socket or timer behind, raise',
    'no unhandled rejection, and leave the proxy serving: after each fault the same proxy answers a normal',
    'request. Each cell below is what was observed, not what was hoped for; the suite asserts that it matches',
    'the expectation in `test/faults/fault-modes.ts`.',
    '',
    'Every run uses `maxRetries: 1` with an instant injected sleep, so the table also shows which failures are',
    `retried ("2 attempts"), and a response limit of ${RESPONSE_LIMIT_BYTES / 1024} KiB. Each mode uses one of these deadline profiles:`,
    '',
    ...profiles,
    '',
    'How to read a cell:',
    '',
    '- library: `message`, or the `TransportError` as `code status error.type [deadline]`; "events, then …" when',
    '  the stream had delivered events before failing (a stream is never retried after that).',
    '- proxy: `200 message` / `200 stream to message_stop`; `HTTP <status> <error.type>` when the failure came',
    '  before the first event; `200 events, then event: error <error.type>` when it came after.',
    '',
    '## Summary',
    '',
  );
  const columns: { title: string; entry: EntryPoint; via: Observation['via'] }[] = [
    { title: 'library `send`', entry: 'send', via: 'library' },
    { title: 'library `stream`', entry: 'stream', via: 'library' },
    { title: 'proxy, JSON', entry: 'send', via: 'proxy' },
    { title: 'proxy, SSE', entry: 'stream', via: 'proxy' },
  ];
  const perColumn = columns.map((column) =>
    countsByOutcome(
      observations.filter(
        (observation) => observation.entry === column.entry && observation.via === column.via,
      ),
    ),
  );
  const keys = [...new Set(perColumn.flatMap((counts) => [...counts.keys()]))].sort();
  const runs = columns.map(
    (column) =>
      observations.filter(
        (observation) => observation.entry === column.entry && observation.via === column.via,
      ).length,
  );
  lines.push(
    `${FAULT_MODES.length} modes; ${observations.length} runs (${runs.join(' + ')} over the four entry points, both providers).`,
    '',
    `| outcome | ${columns.map((column) => column.title).join(' | ')} |`,
    `|---|${columns.map(() => '---:').join('|')}|`,
  );
  for (const key of keys)
    lines.push(`| ${key} | ${perColumn.map((counts) => counts.get(key) ?? 0).join(' | ')} |`);
  lines.push(
    '',
    '## Modes',
    '',
    '| # | mode | what the upstream does | providers | deadlines |',
    '|---:|---|---|---|---|',
  );
  FAULT_MODES.forEach((mode, index) => {
    lines.push(
      `| ${index + 1} | \`${mode.name}\` | ${cell(mode.upstream)} | ${PROVIDERS.every((provider) => appliesTo(mode, provider)) ? 'both' : PROVIDERS.filter((provider) => appliesTo(mode, provider)).join(', ')} | \`${mode.profile ?? 'standard'}\` |`,
    );
  });
  lines.push(
    '',
    '## Observed outcomes',
    '',
    'Modes with the same outcomes share a row, in the order of the table above; `both` stands for the two',
    'providers when they gave the same outcomes.',
    '',
    `| modes | provider | ${columns.map((column) => column.title).join(' | ')} |`,
    `|---|---|${columns.map(() => '---').join('|')}|`,
  );
  // One row per outcome: the modes (for one provider, or `both` when the two agree) that gave it.
  const rows = new Map<string, { modes: string[]; provider: string; cells: string[] }>();
  for (const mode of FAULT_MODES) {
    const perProvider = PROVIDERS.filter((provider) => appliesTo(mode, provider)).map((provider) => ({
      provider: String(provider),
      cells: columns.map((column) => {
        const observation = find(mode.name, provider, column.entry, column.via);
        return observation === undefined ? 'not run' : cell(formatObserved(observation));
      }),
    }));
    const agree =
      perProvider.length === PROVIDERS.length &&
      perProvider.every((entry) => JSON.stringify(entry.cells) === JSON.stringify(perProvider[0]!.cells));
    for (const entry of agree ? [{ provider: 'both', cells: perProvider[0]!.cells }] : perProvider) {
      const key = JSON.stringify([entry.provider, entry.cells]);
      const row = rows.get(key) ?? { modes: [], provider: entry.provider, cells: entry.cells };
      row.modes.push(`\`${mode.name}\``);
      rows.set(key, row);
    }
  }
  for (const row of rows.values()) {
    lines.push(`| ${row.modes.join(', ')} | ${row.provider} | ${row.cells.join(' | ')} |`);
  }
  lines.push('', ...renderHostileCases());
  return lines.join('\n');
}

/** One row of the hostile cases' table, as the report writes it and its test reads it. */
export function hostileCaseCells(hostileCase: HostileCase): string[] {
  return [
    hostileCase.group,
    hostileCase.input,
    hostileCase.outcome,
    `\`${hostileCase.test.file}\`: ${hostileCase.test.title}`,
  ].map(cell);
}

function renderHostileCases(): string[] {
  return [
    "## Hostile input and the network's odd corners",
    '',
    'What a caller, a web page or an upstream can try beyond the fault modes above, what it gets, and the test',
    'that pins it (`test/faults/hostile-cases.ts`; the report test checks each named test exists).',
    '',
    '| class | what is tried | outcome | pinned by |',
    '|---|---|---|---|',
    ...HOSTILE_CASES.map((hostileCase) => `| ${hostileCaseCells(hostileCase).join(' | ')} |`),
    '',
  ];
}
