/**
 * `tpx mock-model`: an OpenAI-compatible Chat Completions server that answers from a script, then by a
 * deterministic default behaviour. Users run it to test their agents offline; our own tests and demo use
 * it as the OpenAI-compatible upstream.
 *
 * | endpoint                                                     | answer                                      |
 * |--------------------------------------------------------------|---------------------------------------------|
 * | `POST /v1/chat/completions` (or `/chat/completions`)         | the next scripted reply, else the default behaviour; JSON or SSE |
 * | `GET /v1/models` (or `/models`), `GET /v1/models/{id}`       | the one configured model                    |
 * | anything else                                                | 404, OpenAI-shaped error                    |
 *
 * Every request is recorded (method, path, headers, body, and whether the client went away before the
 * response was complete). Only `node:` built-ins are used.
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setImmediate, setTimeout as sleep } from 'node:timers/promises';

import { readChatRequest, type ChatRequest } from './chat-request.js';
import { defaultCompletion } from './default-reply.js';
import { renderCompletionBody, renderCompletionChunks, type Completion } from './render-completion.js';
import {
  classifyReply,
  parseMockScript,
  type MockReply,
  type MockScript,
  type MockScriptedToolCall,
} from './script.js';

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
  /** The model name listed by `/v1/models` and reported in every completion. @default 'tpx-mock-1' */
  model?: string;
  /** Delay between stream chunks, in milliseconds; a reply's `chunk_delay_ms` overrides it. @default 0 */
  chunkDelayMs?: number;
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
  /** Every request received so far, oldest first (a live view). */
  readonly requests: readonly RecordedRequest[];
  /** Stops listening, ends every open connection and in-flight response, and resolves once closed. */
  close(): Promise<void>;
}

/** `created` of the listed model: fixed, so that `/v1/models` is deterministic. */
const MODEL_CREATED = 1_767_225_600; // 2026-01-01T00:00:00Z
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const STREAM_ERROR_TEXT = 'This answer is cut short by a scripted error.';
const DEFAULT_AFTER_CHUNKS = 2;

interface MutableRecordedRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: unknown;
  aborted: boolean;
}

/** What to send for one chat completion request. */
type Plan =
  | { kind: 'completion'; completion: Completion; delayMs: number; chunkDelayMs: number }
  | { kind: 'http_error'; status: number; headers: Record<string, string>; body: unknown; delayMs: number }
  | {
      kind: 'stream_error';
      completion: Completion;
      afterChunks: number;
      error: Record<string, unknown>;
      delayMs: number;
      chunkDelayMs: number;
    };

interface ServerState {
  readonly model: string;
  readonly tokenDigest: Buffer | undefined;
  readonly chunkDelayMs: number;
  readonly replies: MockReply[];
  readonly requests: MutableRecordedRequest[];
  /** One controller per response in progress, aborted when its client leaves or the server closes. */
  readonly inFlight: Set<AbortController>;
  /** Tool calls given an id by the server so far (ids stay unique for the server's life). */
  toolCallCount: number;
  /** Chat completion responses so far (numbers the `chatcmpl-…` and `x-request-id` values). */
  responseCount: number;
}

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
  const model = options.model ?? 'tpx-mock-1';
  if (model === '') throw new Error('mock model: model must not be empty');

  const state: ServerState = {
    model,
    tokenDigest: options.token === undefined ? undefined : digest(`Bearer ${options.token}`),
    chunkDelayMs,
    replies: options.script === undefined ? [] : parseMockScript(options.script).replies,
    requests: [],
    inFlight: new Set(),
    toolCallCount: 0,
    responseCount: 0,
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

async function handleRequest(
  state: ServerState,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://mock.invalid');
  const record: MutableRecordedRequest = {
    method: request.method ?? 'GET',
    path: url.pathname,
    query: url.search,
    headers: flattenHeaders(request.headers),
    body: '',
    aborted: false,
  };
  state.requests.push(record);
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
  const signal = controller.signal;

  try {
    const raw = await readBody(request);
    if (raw === undefined) {
      const error = {
        message: 'The request body is too large.',
        type: 'invalid_request_error',
        param: null,
        code: null,
      };
      // The rest of the body is never read, so the connection cannot be reused.
      sendJson(response, 413, { error }, { connection: 'close' });
      return;
    }
    const parsed = parseJson(raw);
    record.body = parsed.isJson ? parsed.value : raw;

    if (state.tokenDigest !== undefined && !isAuthorized(request.headers.authorization, state.tokenDigest)) {
      const message =
        request.headers.authorization === undefined
          ? "You didn't provide an API key. Send it in an Authorization header using Bearer auth (Authorization: Bearer YOUR_KEY)."
          : 'Incorrect API key provided.';
      sendError(response, 401, message, 'invalid_request_error', null, 'invalid_api_key');
      return;
    }

    const route = routeOf(record.method, url.pathname);
    switch (route.kind) {
      case 'models':
        sendJson(response, 200, {
          object: 'list',
          data: [{ id: state.model, object: 'model', created: MODEL_CREATED, owned_by: 'tpx-mock' }],
        });
        return;
      case 'model':
        if (route.id === state.model) {
          sendJson(response, 200, {
            id: state.model,
            object: 'model',
            created: MODEL_CREATED,
            owned_by: 'tpx-mock',
          });
        } else {
          sendError(
            response,
            404,
            `The model '${route.id}' does not exist.`,
            'invalid_request_error',
            'model',
            'model_not_found',
          );
        }
        return;
      case 'not_found':
        sendError(
          response,
          404,
          `Invalid URL (${record.method} ${url.pathname})`,
          'invalid_request_error',
          null,
          null,
        );
        return;
      case 'chat':
        break;
      default: {
        const unreachable: never = route;
        return unreachable;
      }
    }

    if (!parsed.isJson) {
      sendError(
        response,
        400,
        'We could not parse the JSON body of your request. Send a JSON object with "model" and "messages".',
        'invalid_request_error',
        null,
        null,
      );
      return;
    }
    const chat = readChatRequest(parsed.value);
    if (!chat.ok) {
      const { message, param, code } = chat.problem;
      sendError(response, 400, message, 'invalid_request_error', param, code);
      return;
    }
    const plan = planReply(state, chat.request);
    await answer(state, chat.request, plan, response, signal);
  } catch (error) {
    // A client that went away (or a server that is closing) interrupts sleeps and writes: nothing to do.
    if (signal.aborted) return;
    if (!response.headersSent) {
      const detail = error instanceof Error ? error.message : String(error);
      sendError(response, 500, `The mock model failed: ${detail}`, 'server_error', null, null);
    } else {
      response.destroy();
    }
  }
}

type Route = { kind: 'chat' } | { kind: 'models' } | { kind: 'model'; id: string } | { kind: 'not_found' };

function routeOf(method: string, pathname: string): Route {
  const path = pathname.replace(/\/+$/, '').replace(/^\/v1(?=\/)/, '');
  if (method === 'POST' && path === '/chat/completions') return { kind: 'chat' };
  if (method === 'GET' && path === '/models') return { kind: 'models' };
  const model = /^\/models\/([^/]+)$/.exec(path);
  if (method === 'GET' && model?.[1] !== undefined)
    return { kind: 'model', id: decodeURIComponent(model[1]) };
  return { kind: 'not_found' };
}

/** Takes the next scripted reply, or the default behaviour, and resolves it into a plan. */
function planReply(state: ServerState, request: ChatRequest): Plan {
  const reply = state.replies.shift();
  const nextToolCallId = (): string => `call_mock${String(++state.toolCallCount).padStart(6, '0')}`;
  if (reply === undefined) {
    return {
      kind: 'completion',
      completion: defaultCompletion(request, nextToolCallId),
      delayMs: 0,
      chunkDelayMs: state.chunkDelayMs,
    };
  }
  const delayMs = reply.delay_ms ?? 0;
  const chunkDelayMs = reply.chunk_delay_ms ?? state.chunkDelayMs;
  const scriptedCalls = (calls: readonly MockScriptedToolCall[] | undefined): Completion['toolCalls'] =>
    (calls ?? []).map((call) => ({
      id: call.id ?? nextToolCallId(),
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    }));
  const classified = classifyReply(reply);
  switch (classified.kind) {
    case 'text':
      return {
        kind: 'completion',
        completion: {
          reasoning: classified.reply.reasoning ?? null,
          text: classified.reply.text,
          toolCalls: [],
          finishReason: classified.reply.finish_reason ?? 'stop',
        },
        delayMs,
        chunkDelayMs,
      };
    case 'tool_calls':
      return {
        kind: 'completion',
        completion: {
          reasoning: classified.reply.reasoning ?? null,
          text: classified.reply.text ?? null,
          toolCalls: scriptedCalls(classified.reply.tool_calls),
          finishReason: classified.reply.finish_reason ?? 'tool_calls',
        },
        delayMs,
        chunkDelayMs,
      };
    case 'error': {
      const { status, headers, body } = classified.reply.error;
      return {
        kind: 'http_error',
        status,
        headers: headers ?? {},
        body: body ?? defaultErrorBody(status),
        delayMs,
      };
    }
    case 'stream_error': {
      const { reasoning, text, tool_calls: toolCalls, stream_error: streamError } = classified.reply;
      const hasContent = reasoning !== undefined || text !== undefined || toolCalls !== undefined;
      return {
        kind: 'stream_error',
        completion: {
          reasoning: reasoning ?? null,
          text: hasContent ? (text ?? null) : STREAM_ERROR_TEXT,
          toolCalls: scriptedCalls(toolCalls),
          finishReason: null,
        },
        afterChunks: streamError.after_chunks ?? DEFAULT_AFTER_CHUNKS,
        error: streamError.error ?? {
          message: 'The mock model was scripted to fail in the middle of this stream.',
          type: 'server_error',
          param: null,
          code: null,
        },
        delayMs,
        chunkDelayMs,
      };
    }
    default: {
      const unreachable: never = classified;
      return unreachable;
    }
  }
}

async function answer(
  state: ServerState,
  request: ChatRequest,
  plan: Plan,
  response: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  if (plan.delayMs > 0) await sleep(plan.delayMs, undefined, { signal });
  const sequence = ++state.responseCount;
  const requestId = `req_mock${String(sequence).padStart(6, '0')}`;
  switch (plan.kind) {
    case 'http_error': {
      const isText = typeof plan.body === 'string';
      const headers: Record<string, string> = {
        'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json',
        'x-request-id': requestId,
        ...plan.headers,
      };
      const payload = isText ? (plan.body as string) : JSON.stringify(plan.body ?? null);
      response.writeHead(plan.status, headers);
      response.end(payload);
      return;
    }
    case 'completion':
    case 'stream_error':
      break;
    default: {
      const unreachable: never = plan;
      return unreachable;
    }
  }

  const envelope = {
    id: `chatcmpl-mock${String(sequence).padStart(6, '0')}`,
    created: Math.floor(Date.now() / 1000),
    model: state.model,
    promptCharacters: request.promptCharacters,
  };
  if (!request.stream) {
    if (plan.kind === 'stream_error') {
      sendJson(response, 500, { error: plan.error }, { 'x-request-id': requestId });
    } else {
      sendJson(response, 200, renderCompletionBody(plan.completion, envelope), { 'x-request-id': requestId });
    }
    return;
  }

  const { contentChunks, closingChunks } = renderCompletionChunks(
    plan.completion,
    envelope,
    request.includeUsage,
  );
  const frames =
    plan.kind === 'stream_error'
      ? [...contentChunks.slice(0, plan.afterChunks), { error: plan.error }]
      : [...contentChunks, ...closingChunks];
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-request-id': requestId,
  });
  response.flushHeaders();
  const lines = [...frames.map((frame) => JSON.stringify(frame)), '[DONE]'];
  for (const [index, line] of lines.entries()) {
    if (index > 0 && plan.chunkDelayMs > 0) await sleep(plan.chunkDelayMs, undefined, { signal });
    signal.throwIfAborted();
    if (!response.write(`data: ${line}\n\n`)) await once(response, 'drain', { signal });
  }
  response.end();
}

/** An OpenAI-shaped error body for a scripted error status without a body of its own. */
function defaultErrorBody(status: number): { error: Record<string, unknown> } {
  const [type, code, message] = ((): [string, string | null, string] => {
    switch (status) {
      case 400:
        return ['invalid_request_error', null, 'The mock model was scripted to reject this request.'];
      case 401:
        return ['invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.'];
      case 403:
        return ['permission_error', null, 'You are not allowed to use this model.'];
      case 404:
        return [
          'invalid_request_error',
          'model_not_found',
          'The model does not exist or you do not have access to it.',
        ];
      case 413:
        return ['invalid_request_error', 'request_too_large', 'The request is too large.'];
      case 429:
        return ['rate_limit_error', 'rate_limit_exceeded', 'Rate limit reached. Please try again later.'];
      case 503:
        return [
          'service_unavailable_error',
          'server_is_overloaded',
          'The server is overloaded. Please slow down.',
        ];
      default:
        return status >= 500
          ? ['server_error', null, 'The server had an error while processing your request.']
          : ['invalid_request_error', null, `The mock model was scripted to answer with status ${status}.`];
    }
  })();
  return { error: { message, type, param: null, code } };
}

function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  type: string,
  param: string | null,
  code: string | null,
): void {
  sendJson(response, status, { error: { message, type, param, code } });
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(payload)),
    ...headers,
  });
  response.end(payload);
}

/** The body as UTF-8 text, or `undefined` when it exceeds the size limit. */
async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(raw: string): { isJson: true; value: unknown } | { isJson: false } {
  try {
    return { isJson: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { isJson: false };
  }
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Compares digests rather than strings so that the comparison takes the same time whatever the input. */
function isAuthorized(authorization: string | undefined, expectedDigest: Buffer): boolean {
  return authorization !== undefined && timingSafeEqual(digest(authorization), expectedDigest);
}
