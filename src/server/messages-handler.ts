/**
 * The proxy's handler: maps one inbound request to one response, with no knowledge of sockets (see
 * `node-adapter.ts` for those), so that it runs in-process in tests.
 *
 * | route                              | answer |
 * |------------------------------------|--------|
 * | `POST /v1/messages[?…]`            | `transport.send` → the message as JSON; with `"stream": true`, `transport.stream` → Messages SSE |
 * | `POST /v1/messages/count_tokens`   | `transport.countTokens` → `{"input_tokens": n}` |
 * | `GET /v1/models`                   | `transport.listModels` → a Messages model list |
 * | `GET /healthz`                     | `{"ok": true, "provider": …, "reason": …}` (no proxy token needed, no secret in it) |
 * | another path / method              | 404 / 405 Messages error |
 *
 * A stream's headers are produced only once its first event exists: a failure before that is an HTTP
 * error with the error's own status and Messages body; a failure after it is an `event: error` frame
 * that ends the stream. The proxy keeps no state between exchanges.
 *
 * @module
 */
import type { Logger } from 'pino';
import { TransportError } from '../errors.js';
import type { MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import { rawJsonOf } from '../providers/raw-json.js';
import { streamBatches } from '../transport/stream-batches.js';
import type { ModelTransport } from '../transport/types.js';
import { createProxyAuth } from './auth.js';
import { hasPassedThrough, loopError } from './loop-guard.js';
import { createRequestHeaderCheck, type RequestHeaderCheckOptions } from './check-request-headers.js';
import { handleCountTokens } from './count-tokens.js';
import { errorFrame, proxyError } from './error-response.js';
import { PING_FRAME, settlesWithin } from './keep-alive.js';
import {
  Exchange,
  generateRequestId,
  keepsBodies,
  mergeUsage,
  type ExchangeEnvironment,
} from './exchange.js';
import type { ExchangeRecorder } from './exchange-recorder.js';
import { LIVE_VIEW_ROUTES, liveViewAnswer, type LiveView } from './live-view.js';
import type { UsageRecord } from './logger.js';
import type { Telemetry } from '../telemetry/exchange-telemetry.js';
import type { InboundRequest, JsonResponse, ProxyHandler, ProxyResponse, SseResponse } from './types.js';
import { encodeSseEvent } from './write-sse.js';
import { StreamTranscript } from './stream-transcript.js';
import { stringifyExactJson } from '../protocol/exact-json.js';

/** Options of {@link createMessagesHandler}. */
export interface MessagesHandlerOptions {
  transport: ModelTransport;
  /** When set, every route but `/healthz` requires it in `x-api-key` or `Authorization: Bearer`. */
  proxyToken?: string | undefined;
  /** Where exchange lines go. */
  logger: Logger;
  /** Log request and JSON response bodies (a debugging aid: bodies hold conversations). @default false */
  logBodies?: boolean;
  /** Fresh ids for answers the upstream did not give one. @default `req_` + 24 random characters */
  generateRequestId?: () => string;
  /** Metrics and traces of each exchange. @default none */
  telemetry?: Telemetry | undefined;
  /**
   * When a stream's first event takes longer than this, its headers go out with a ping instead of
   * waiting (see `keep-alive.ts`); 0: always wait. @default 0
   */
  pingIntervalMs?: number;
  /**
   * This proxy's instance id, also sent upstream in the hop header: a request arriving with it has come
   * back around a loop and is answered 508 at once. @default undefined (no loop check)
   */
  instanceId?: string;
  /** The proxy's own URL, for the loop message. */
  ownUrl?: string | undefined;
  /**
   * Checks every request's `Host`, `Origin` and body type before anything else (see
   * `check-request-headers.ts`); `tpx serve` always sets it. @default no check
   */
  requestCheck?: RequestHeaderCheckOptions;
  /** Keeps each finished `POST /v1/messages` exchange (the journal, the live view). @default none */
  recorder?: ExchangeRecorder | undefined;
  /** Serves `GET /tpx/status` and `GET /tpx/exchanges` (see `live-view.ts`). @default not served */
  liveView?: LiveView | undefined;
}

const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/** The methods each route accepts, for 405 answers and their `allow` header. */
const ROUTE_METHODS: ReadonlyMap<string, string> = new Map([
  ['/v1/messages', 'POST'],
  ['/v1/messages/count_tokens', 'POST'],
  ['/v1/models', 'GET'],
  ['/healthz', 'GET'],
]);

/** Keeps the usage fields of a stream's `message_start` and `message_delta` events, and its stop reason. */
function trackUsage(exchange: Exchange, usage: UsageRecord, event: MessageStreamEvent): void {
  if (event.type === 'message_start') mergeUsage(usage, event.message.usage);
  else if (event.type === 'message_delta') {
    mergeUsage(usage, event.usage);
    if (event.delta.stop_reason !== null) exchange.stopReason = event.delta.stop_reason;
  }
}

/** Adds `extra` (CORS headers for an allowed origin) to an answer's headers. */
function withHeaders<Response extends ProxyResponse>(
  response: Response,
  extra: Record<string, string> | undefined,
): Response {
  if (extra !== undefined) Object.assign(response.headers, extra);
  return response;
}

/** What every exchange of one handler shares. */
interface HandlerContext {
  readonly transport: ModelTransport;
  readonly options: MessagesHandlerOptions;
  readonly isAuthorised: ReturnType<typeof createProxyAuth>;
  readonly pingIntervalMs: number;
  /** The `/healthz` answer, made once. */
  readonly healthBody: string;
  /** Whether a doubled `/v1` (`/v1/v1/messages`) was already warned of: the warning is logged once. */
  hasWarnedOfDoubledVersion: boolean;
}

/**
 * The route a path names. A client whose base URL already ends in `/v1` (`ANTHROPIC_BASE_URL=…/v1`)
 * asks for `/v1/v1/messages`, since it adds `/v1/messages` itself: that is served as `/v1/messages`
 * (and so for each route), with a warning logged once naming the setting to fix, rather than answered
 * with a 404 the client would show as "an issue with the selected model".
 */
function routeOf(context: HandlerContext, path: string): string {
  if (!path.startsWith('/v1/v1/')) return path;
  const single = path.slice('/v1'.length);
  if (!ROUTE_METHODS.has(single)) return path;
  if (!context.hasWarnedOfDoubledVersion) {
    context.hasWarnedOfDoubledVersion = true;
    const own = context.options.ownUrl ?? "this proxy's URL";
    context.options.logger.warn(
      { path, servedAs: single },
      `a client asked for ${path}: its base URL ends in /v1, and clients add /v1 themselves. Served as ${single}; ` +
        `fix: set ANTHROPIC_BASE_URL=${own} (without /v1) where the client runs`,
    );
  }
  return single;
}

/** The first batch of a stream; a stream without one is broken. */
function firstEvents(
  transport: ModelTransport,
  first: IteratorResult<MessageStreamEvent[]>,
): MessageStreamEvent[] {
  if (first.done === true) {
    throw new TransportError('MODEL_EPROTO', 'the stream ended before its first event', {
      provider: transport.provider,
    });
  }
  return first.value;
}

/** A batch of events as SSE frames, in one string: one write for what one upstream chunk produced. */
function encodeBatch(exchange: Exchange, usage: UsageRecord, batch: readonly MessageStreamEvent[]): string {
  let frames = '';
  for (const event of batch) {
    trackUsage(exchange, usage, event);
    exchange.transcript?.add(event);
    frames += encodeSseEvent(event);
  }
  return frames;
}

/** A stream's upstream side: its first batch (maybe still on its way) and the rest. */
interface UpstreamStream {
  first: Promise<IteratorResult<MessageStreamEvent[]>>;
  iterator: AsyncIterator<MessageStreamEvent[]>;
  /** Whether the headers go out with a ping before the first batch (a silent upstream). */
  isEarly: boolean;
}

/**
 * The SSE frames of a stream: a ping first when it started early, then one string per upstream batch.
 * A failure ends the stream with an `event: error` frame (unless the client left); a consumer that stops
 * early ends the upstream exchange too. The exchange is logged once, however it ends.
 */
async function* streamFrames(
  transport: ModelTransport,
  exchange: Exchange,
  upstream: UpstreamStream,
  usage: UsageRecord,
): AsyncGenerator<string> {
  let state: 'streaming' | 'complete' | 'failed' = 'streaming';
  let failure: unknown;
  try {
    if (upstream.isEarly) yield PING_FRAME;
    yield encodeBatch(exchange, usage, firstEvents(transport, await upstream.first));
    for (;;) {
      const next = await upstream.iterator.next();
      if (next.done === true) break;
      yield encodeBatch(exchange, usage, next.value);
    }
    state = 'complete';
  } catch (error) {
    state = 'failed';
    failure = error;
    // A client that left gets nothing more; any other failure ends the stream with an error frame.
    if (!exchange.clientGone) yield errorFrame(error, exchange.requestId);
  } finally {
    if (state === 'streaming') {
      // The consumer stopped early (the client went away): end the upstream exchange too.
      await upstream.iterator.return?.().catch(() => undefined);
    }
    exchange.log(200, failure, { clientClosed: exchange.clientGone || state === 'streaming' });
  }
}

/** The SSE answer of a stream whose first batch exists (or whose upstream is silent: `isEarly`). */
function streamResponse(
  transport: ModelTransport,
  exchange: Exchange,
  upstream: UpstreamStream,
): SseResponse {
  const usage: UsageRecord = {};
  exchange.usage = usage;
  if (keepsBodies(exchange.environment)) exchange.transcript = new StreamTranscript();
  exchange.answerReady();
  exchange.telemetry?.streamOpened();
  const headers = exchange.responseHeaders(SSE_CONTENT_TYPE);
  headers['cache-control'] = 'no-cache';
  return { kind: 'sse', status: 200, headers, frames: streamFrames(transport, exchange, upstream, usage) };
}

/** `POST /v1/messages`: one message as JSON, or with `"stream": true` a Messages event stream. */
async function sendMessage(context: HandlerContext, exchange: Exchange): Promise<ProxyResponse> {
  const { transport, pingIntervalMs } = context;
  const { raw, value } = await exchange.readJsonObject();
  exchange.isStream = value['stream'] === true;
  // Only `stream` and `model` are read here; the transport validates the whole request (and answers
  // MODEL_EINVAL / MODEL_EPAIRING with a 400) before anything is sent upstream.
  const request = value as MessagesRequest;
  const exchangeOptions = exchange.exchangeOptions(raw);
  if (!exchange.isStream) {
    const message = await transport.send(request, exchangeOptions);
    exchange.usage = {};
    mergeUsage(exchange.usage, message.usage);
    if (message.stop_reason !== null) exchange.stopReason = message.stop_reason;
    // A native answer goes out as the upstream wrote it; a translated one is serialised here.
    return exchange.json(200, rawJsonOf(message) ?? stringifyExactJson(message));
  }
  const iterator = streamBatches(transport, request, exchangeOptions)[Symbol.asyncIterator]();
  const first = iterator.next();
  // An upstream silent for a whole ping interval gets its stream started now, with a ping, so that
  // nothing between the client and the proxy gives up on an idle connection.
  const isEarly = pingIntervalMs > 0 && !(await settlesWithin(first, pingIntervalMs));
  if (!isEarly) firstEvents(transport, await first);
  return streamResponse(transport, exchange, { first, iterator, isEarly });
}

/** `GET /v1/models`. */
async function listModels(transport: ModelTransport, exchange: Exchange): Promise<JsonResponse> {
  if (transport.listModels === undefined) throw proxyError(404, 'this transport cannot list models');
  const list = await transport.listModels(exchange.exchangeOptions());
  return exchange.json(200, JSON.stringify(list));
}

/** The answers that need no proxy token: liveness, and the probes clients send before they start. */
function unauthenticatedAnswer(context: HandlerContext, exchange: Exchange): JsonResponse | undefined {
  const { method } = exchange.request;
  const { path } = exchange;
  if (path === '/healthz' && (method === 'GET' || method === 'HEAD')) {
    return exchange.json(200, context.healthBody, 'debug');
  }
  // Clients check that a server is there before they start (Claude Code: `HEAD /`, `/api/hello`): an
  // empty 200, logged at debug level, not an error line per start.
  if ((path === '/' && (method === 'HEAD' || method === 'GET')) || path === '/api/hello') {
    return exchange.json(200, '{}', 'debug');
  }
  return undefined;
}

/** `GET /tpx/status` and `GET /tpx/exchanges`: the live view, logged at debug level. */
async function answerLiveView(view: LiveView, exchange: Exchange, path: string): Promise<JsonResponse> {
  const { method } = exchange.request;
  if (method !== 'GET' && method !== 'HEAD') throw proxyError(405, `${path} accepts GET, not ${method}`);
  const { contentType, body, headers } = await liveViewAnswer(view, path);
  exchange.answerReady();
  const response: JsonResponse = {
    kind: 'json',
    status: 200,
    headers: { ...exchange.responseHeaders(contentType), ...headers },
    body,
  };
  exchange.log(200, undefined, {}, 'debug');
  return response;
}

/** Routes one exchange; throws what becomes its error answer. */
async function route(context: HandlerContext, exchange: Exchange): Promise<ProxyResponse> {
  const { instanceId, ownUrl } = context.options;
  const { method } = exchange.request;
  const path = routeOf(context, exchange.path);
  if (instanceId !== undefined && hasPassedThrough(exchange.request.headers, instanceId)) {
    throw loopError(ownUrl ?? 'this proxy');
  }
  const open = unauthenticatedAnswer(context, exchange);
  if (open !== undefined) return open;
  const { liveView } = context.options;
  const liveRoute = liveView === undefined ? undefined : LIVE_VIEW_ROUTES.get(path);
  if (liveView !== undefined && liveRoute?.needsToken === false)
    return answerLiveView(liveView, exchange, path);
  if (!context.isAuthorised(exchange.request.headers)) {
    throw proxyError(
      401,
      'this proxy requires its token: send it as the x-api-key header or as Authorization: Bearer <token>',
    );
  }
  if (liveView !== undefined && liveRoute !== undefined) return answerLiveView(liveView, exchange, path);
  const allowed = ROUTE_METHODS.get(path);
  if (allowed === undefined) throw proxyError(404, `no such endpoint: ${method} ${path}`);
  if (method !== allowed) throw proxyError(405, `${path} accepts ${allowed}, not ${method}`);
  switch (path) {
    case '/v1/messages':
      exchange.isRecorded = method === 'POST';
      return sendMessage(context, exchange);
    case '/v1/messages/count_tokens':
      return handleCountTokens(context.transport, exchange);
    case '/v1/models':
      return listModels(context.transport, exchange);
    default:
      throw proxyError(404, `no such endpoint: ${method} ${path}`);
  }
}

/** Creates the handler. It never rejects: every failure becomes a Messages error answer. */
export function createMessagesHandler(options: MessagesHandlerOptions): ProxyHandler {
  const { transport } = options;
  const checkHeaders =
    options.requestCheck === undefined ? undefined : createRequestHeaderCheck(options.requestCheck);
  const environment: ExchangeEnvironment = {
    provider: transport.provider,
    logger: options.logger,
    logBodies: options.logBodies ?? false,
    generateRequestId: options.generateRequestId ?? generateRequestId,
    telemetry: options.telemetry,
    recorder: options.recorder,
    ...(checkHeaders === undefined ? {} : { checkBody: checkHeaders.checkBody }),
  };
  const context: HandlerContext = {
    transport,
    options,
    isAuthorised: createProxyAuth(options.proxyToken),
    pingIntervalMs: options.pingIntervalMs ?? 0,
    healthBody: JSON.stringify({
      ok: true,
      provider: transport.selection.provider,
      reason: transport.selection.reason,
    }),
    hasWarnedOfDoubledVersion: false,
  };

  return async function handle(request: InboundRequest): Promise<ProxyResponse> {
    const exchange = new Exchange(request, environment);
    let corsHeaders: Record<string, string> | undefined;
    try {
      const checked = checkHeaders?.(request);
      corsHeaders = checked?.corsHeaders;
      if (checked?.isPreflight === true) return withHeaders(exchange.json(204, ''), corsHeaders);
      return withHeaders(await route(context, exchange), corsHeaders);
    } catch (error) {
      const response = exchange.fail(error);
      const allowed = ROUTE_METHODS.get(routeOf(context, exchange.path));
      if (response.status === 405 && allowed !== undefined) response.headers['allow'] = allowed;
      return withHeaders(response, corsHeaders);
    }
  };
}
