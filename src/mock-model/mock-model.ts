/**
 * `tpx mock-model`: an OpenAI-compatible server (Chat Completions and the Responses API) that answers
 * from a script, then by a deterministic default behaviour. Users run it to test their agents offline;
 * our own tests and demo use it as the OpenAI-compatible upstream.
 *
 * | endpoint                                                     | answer                                      |
 * |--------------------------------------------------------------|---------------------------------------------|
 * | `POST /v1/chat/completions` (or `/chat/completions`)         | the next scripted reply, else the default behaviour; JSON or SSE |
 * | `POST /v1/responses` (or `/responses`)                       | the same, as the Responses API answers: JSON or its event stream |
 * | `GET /v1/models` (or `/models`), `GET /v1/models/{id}`       | the one configured model                    |
 * | anything else                                                | 404, OpenAI-shaped error                    |
 *
 * Every request is recorded (method, path, headers, body, and whether the client went away before the
 * response was complete), or only the latest `maxRecordedRequests` of them: `tpx mock-model`, which
 * nothing can ask for its records, keeps none, so that a long run does not hold every body it was sent.
 * Both endpoints share one script, one default behaviour and one id sequence.
 * Only `node:` built-ins are used.
 *
 * @module
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setImmediate } from 'node:timers/promises';

import { answerWithPlan, type WireRendering } from './answer-with-plan.js';
import { CHAT_REQUEST_SHAPE } from './chat-request-shape.js';
import { flattenHeaders, parseJson, readBody, sendError, sendJson } from './http-replies.js';
import { digest, isAuthorized } from './is-authorized.js';
import type { MockModelState, MutableRecordedRequest } from './mock-model-state.js';
import { readMockRequest, type WireRequestShape } from './mock-request.js';
import { planReply, type Plan } from './plan-reply.js';
import { chatRendering } from './render-completion.js';
import { responsesRendering } from './render-response.js';
import { RESPONSES_REQUEST_SHAPE } from './responses-request-shape.js';
import { parseMockScript, type MockScript } from './script.js';
import { Replayer, type ReplayJournal } from './replay.js';

export { parseMockScript };
export type {
  MockErrorReply,
  MockReply,
  MockReplyTiming,
  MockScript,
  MockScriptedToolCall,
  MockStreamErrorReply,
  MockTextReply,
  MockToolCallsReply,
} from './script.js';

/** Options of `startMockModel`. */
export interface MockModelOptions {
  /** Interface to listen on. @default '127.0.0.1' */
  host?: string;
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /**
   * When set, every request must carry `Authorization: Bearer <token>`; others get 401 with an
   * OpenAI-shaped error body. @default undefined (no check)
   */
  token?: string;
  /** Exact replies, served in order; when they run out, the default behaviour answers. @default no replies */
  script?: MockScript;
  /**
   * The model name listed by `/v1/models` and reported in every completion. @default in replay, the
   * model the first recorded request named; else 'tpx-mock-1'
   */
  model?: string;
  /** Delay between stream chunks, in milliseconds; a reply's `chunk_delay_ms` overrides it. @default 0 */
  chunkDelayMs?: number;
  /**
   * How many requests `requests` keeps: the latest ones, the oldest let go first; `0` keeps none. A mock
   * that serves a long run (a soak test, a benchmark) would otherwise hold every request and its body
   * until it is closed. @default Infinity (every request)
   */
  maxRecordedRequests?: number;
  /**
   * Answer every request from a recorded journal instead (`tpx mock-model --replay FILE`; see
   * `replay.ts`): a recorded request gets its recorded answer, any other a 404 naming the nearest
   * recording. Load one with `loadReplayJournal`. @default no replay
   */
  replay?: ReplayJournal;
}

/** One request as the mock model received it. */
export interface RecordedRequest {
  readonly method: string;
  /** The path without the query string, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** The query string including its `?`, or `''`. */
  readonly query: string;
  /** Request headers, names in lower case; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body parsed as JSON, or its raw text when it is not JSON (`''` for none). */
  readonly body: unknown;
  /** True when the client disconnected before the response was complete. */
  readonly aborted: boolean;
}

/** A running mock model. */
export interface MockModelServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:41234/v1`. */
  readonly url: string;
  readonly port: number;
  /**
   * Every request received so far, oldest first (a live view); only the latest `maxRecordedRequests`
   * when that is set.
   */
  readonly requests: readonly RecordedRequest[];
  /** Stops listening, ends every open connection and in-flight response, and resolves once closed. */
  close(): Promise<void>;
}

/** `created` of the listed model: fixed, so that `/v1/models` is deterministic. */
const MODEL_CREATED = 1_767_225_600; // 2026-01-01T00:00:00Z

/**
 * Starts a mock model and resolves once it is listening.
 *
 * @throws Error for invalid options, including a script that `parseMockScript` rejects.
 *
 * @example
 * const server = await startMockModel({ script: { replies: [{ text: 'Hello!' }] } });
 * // POST `${server.url}/chat/completions` → "Hello!", then the default behaviour
 * await server.close();
 */
export async function startMockModel(options: MockModelOptions = {}): Promise<MockModelServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`mock model: port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  if (!Number.isFinite(chunkDelayMs) || chunkDelayMs < 0) {
    throw new Error(
      `mock model: chunkDelayMs must be a number of milliseconds (0 or more), got ${String(chunkDelayMs)}`,
    );
  }
  if (options.token === '')
    throw new Error('mock model: token must not be empty (leave it out to accept any request)');
  // In replay, the model the recorded requests named upstream is the one served (tpx asks /v1/models).
  const model = options.model ?? recordedModel(options.replay) ?? 'tpx-mock-1';
  if (model === '') throw new Error('mock model: model must not be empty');
  const maxRecordedRequests = options.maxRecordedRequests ?? Number.POSITIVE_INFINITY;
  if (
    !(Number.isInteger(maxRecordedRequests) || maxRecordedRequests === Number.POSITIVE_INFINITY) ||
    maxRecordedRequests < 0
  ) {
    throw new Error(
      `mock model: maxRecordedRequests must be a whole number of requests (0 or more), got ${String(maxRecordedRequests)}`,
    );
  }

  const state: MockModelState = {
    model,
    tokenDigest: options.token === undefined ? undefined : digest(`Bearer ${options.token}`),
    chunkDelayMs,
    replies: options.script === undefined ? [] : parseMockScript(options.script).replies,
    requests: [],
    maxRecordedRequests,
    inFlight: new Set(),
    toolCallCount: 0,
    responseCount: 0,
    replay: options.replay === undefined ? undefined : new Replayer(options.replay, chunkDelayMs),
  };

  const server = createServer((request, response) => {
    void handleRequest(state, request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' || host.includes(':') ? `[${address.address}]` : host;

  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  let closing: Promise<void> | undefined;
  const closeServer = async (): Promise<void> => {
    const socketsClosed = [...sockets].map((socket) => once(socket, 'close'));
    const serverClosed = new Promise<void>((resolve) => {
      // The callback also runs (with ERR_SERVER_NOT_RUNNING) if the server already stopped: fine either way.
      server.close(() => resolve());
    });
    for (const controller of state.inFlight) controller.abort();
    server.closeAllConnections();
    await Promise.all([serverClosed, ...socketsClosed]);
    // The server's 'close' event comes on the next tick, before libuv has released the listening handle;
    // one turn of the event loop later it is gone, so a caller checking for leaked handles sees none.
    await setImmediate();
  };
  return {
    url: `http://${urlHost}:${address.port}/v1`,
    port: address.port,
    requests: state.requests,
    close() {
      closing ??= closeServer();
      return closing;
    },
  };
}

/** The model the first recorded upstream request named, when replaying. */
function recordedModel(replay: ReplayJournal | undefined): string | undefined {
  const body = replay?.recordings[0]?.body;
  const model = typeof body === 'object' && body !== null ? (body as { model?: unknown }).model : undefined;
  return typeof model === 'string' ? model : undefined;
}

/** One endpoint that answers with the model: how its body is read and its answer rendered. */
interface ModelWire {
  readonly shape: WireRequestShape;
  readonly rendering: WireRendering;
}

const CHAT_WIRE: ModelWire = { shape: CHAT_REQUEST_SHAPE, rendering: chatRendering };
const RESPONSES_WIRE: ModelWire = { shape: RESPONSES_REQUEST_SHAPE, rendering: responsesRendering };

type Route =
  | { kind: 'answer'; wire: ModelWire }
  | { kind: 'models' }
  | { kind: 'model'; id: string }
  | { kind: 'not_found' };

/** Handles one request: records it, reads its body, checks the token, and answers by route. */
async function handleRequest(
  state: MockModelState,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://mock.invalid');
  const record = recordRequest(state, request, url);
  const signal = abortWhenClientLeaves(state, response, record);
  try {
    const raw = await readBody(request);
    if (raw === undefined) {
      refuseTooLarge(response);
      return;
    }
    const parsed = parseJson(raw);
    record.body = parsed.isJson ? parsed.value : raw;
    if (!isAllowed(state, request, response)) return;
    const route = routeOf(record.method, url.pathname);
    if (route.kind === 'answer') await answerModelRequest(state, route.wire, parsed, response, signal);
    else answerOtherRoute(state, route, `${record.method} ${url.pathname}`, response);
  } catch (error) {
    failRequest(error, signal, response);
  }
}

/** Records the request (the latest `maxRecordedRequests` of them); its body is filled in once read. */
function recordRequest(state: MockModelState, request: IncomingMessage, url: URL): MutableRecordedRequest {
  const record: MutableRecordedRequest = {
    method: request.method ?? 'GET',
    path: url.pathname,
    query: url.search,
    headers: flattenHeaders(request.headers),
    body: '',
    aborted: false,
  };
  if (state.maxRecordedRequests > 0) {
    state.requests.push(record);
    if (state.requests.length > state.maxRecordedRequests) state.requests.shift();
  }
  return record;
}

/** A signal that aborts when the client goes away before the response is complete (recorded as such). */
function abortWhenClientLeaves(
  state: MockModelState,
  response: ServerResponse,
  record: MutableRecordedRequest,
): AbortSignal {
  const controller = new AbortController();
  state.inFlight.add(controller);
  // 'close' fires once the response is done or the connection is gone; only the latter is an abort.
  response.on('close', () => {
    state.inFlight.delete(controller);
    if (!response.writableFinished) {
      record.aborted = true;
      controller.abort();
    }
  });
  return controller.signal;
}

function refuseTooLarge(response: ServerResponse): void {
  const error = {
    message: 'The request body is too large.',
    type: 'invalid_request_error',
    param: null,
    code: null,
  };
  // The rest of the body is never read, so the connection cannot be reused.
  sendJson(response, 413, { error }, { connection: 'close' });
}

/** Whether the request may be answered: always without a token, else with the right bearer token. */
function isAllowed(state: MockModelState, request: IncomingMessage, response: ServerResponse): boolean {
  if (state.tokenDigest === undefined || isAuthorized(request.headers.authorization, state.tokenDigest)) {
    return true;
  }
  const message =
    request.headers.authorization === undefined
      ? "You didn't provide an API key. Send it in an Authorization header using Bearer auth (Authorization: Bearer YOUR_KEY)."
      : 'Incorrect API key provided.';
  sendError(response, 401, message, 'invalid_request_error', null, 'invalid_api_key');
  return false;
}

/** Reads a model request of `wire`, plans the reply and puts it on the wire. */
async function answerModelRequest(
  state: MockModelState,
  wire: ModelWire,
  parsed: ReturnType<typeof parseJson>,
  response: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  if (!parsed.isJson) {
    const fields = `"model" and "${wire.shape.conversationField}"`;
    sendError(
      response,
      400,
      `We could not parse the JSON body of your request. Send a JSON object with ${fields}.`,
      'invalid_request_error',
      null,
      null,
    );
    return;
  }
  const read = readMockRequest(parsed.value, wire.shape);
  if (!read.ok) {
    const { message, param, code } = read.problem;
    sendError(response, 400, message, 'invalid_request_error', param, code);
    return;
  }
  let plan: Plan;
  if (state.replay === undefined) plan = planReply(state, read.request);
  else {
    const replayed = state.replay.answer(wire === RESPONSES_WIRE ? 'responses' : 'chat', parsed.value);
    if ('notFound' in replayed) {
      sendError(response, 404, replayed.notFound, 'invalid_request_error', null, 'replay_not_recorded');
      return;
    }
    plan = replayed.plan;
  }
  await answerWithPlan(state, read.request, plan, response, signal, wire.rendering);
}

/** The model list, the one model, or a 404. */
function answerOtherRoute(
  state: MockModelState,
  route: Exclude<Route, { kind: 'answer' }>,
  requestLine: string,
  response: ServerResponse,
): void {
  const listed = { id: state.model, object: 'model', created: MODEL_CREATED, owned_by: 'tpx-mock' };
  switch (route.kind) {
    case 'models':
      sendJson(response, 200, { object: 'list', data: [listed] });
      return;
    case 'model':
      if (route.id === state.model) sendJson(response, 200, listed);
      else {
        const message = `The model '${route.id}' does not exist.`;
        sendError(response, 404, message, 'invalid_request_error', 'model', 'model_not_found');
      }
      return;
    case 'not_found':
      sendError(response, 404, `Invalid URL (${requestLine})`, 'invalid_request_error', null, null);
      return;
    default: {
      const unreachable: never = route;
      return unreachable;
    }
  }
}

/** A failure while answering: a 500 while nothing was sent, else the connection is cut. */
function failRequest(error: unknown, signal: AbortSignal, response: ServerResponse): void {
  // A client that went away (or a server that is closing) interrupts sleeps and writes: nothing to do.
  if (signal.aborted) return;
  if (!response.headersSent) {
    const detail = error instanceof Error ? error.message : String(error);
    sendError(response, 500, `The mock model failed: ${detail}`, 'server_error', null, null);
  } else {
    response.destroy();
  }
}

function routeOf(method: string, pathname: string): Route {
  const path = pathname.replace(/\/+$/, '').replace(/^\/v1(?=\/)/, '');
  if (method === 'POST' && path === '/chat/completions') return { kind: 'answer', wire: CHAT_WIRE };
  if (method === 'POST' && path === '/responses') return { kind: 'answer', wire: RESPONSES_WIRE };
  if (method === 'GET' && path === '/models') return { kind: 'models' };
  const model = /^\/models\/([^/]+)$/.exec(path);
  if (method === 'GET' && model?.[1] !== undefined)
    return { kind: 'model', id: decodeURIComponent(model[1]) };
  return { kind: 'not_found' };
}
