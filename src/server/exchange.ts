/**
 * One client exchange with the proxy, from request to logged answer: its request id and timing, the
 * per-exchange options handed to the transport (the client's `anthropic-version` / `anthropic-beta`,
 * query string, body bytes and abort signal — never its credentials), what the upstream reported, and the
 * response headers built from all of that.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import { CANCELLATION, type WithCancellation } from '../providers/cancellation.js';
import { createIdGenerator } from '../transport/id-generator.js';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { isTransportError, type ProviderName } from '../errors.js';
import type { ExchangeOptions, ResponseInfo } from '../transport/types.js';
import { decodeJsonBody } from './decode-json-body.js';
import { errorBodyText, errorResponse, proxyError } from './error-response.js';
import type { ExchangeRecorder, FinishedExchange } from './exchange-recorder.js';
import { logExchange, withRepairLog, type ExchangeRecord, type UsageRecord } from './logger.js';
import { passBackHeaders } from './pass-back-headers.js';
import type {
  ExchangeTelemetry,
  ExchangeOutcome,
  RetryRecord,
  Telemetry,
} from '../telemetry/exchange-telemetry.js';
import { parseRequestTarget } from './request-target.js';
import type { StreamTranscript } from './stream-transcript.js';
import type { ExchangeObserver } from '../providers/observer.js';
import { addRouteHeaders } from './route-headers.js';
import type { InboundRequest, JsonResponse } from './types.js';

/** The only client headers the transport is given. Credentials (`x-api-key`, `authorization`) never are. */
const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta'] as const;

/**
 * A fresh request id in Anthropic's style: `req_`, a random stem of 24 URL-safe characters made once per
 * process (so replicas never collide), and a counter. Unique, not secret.
 */
const nextRequestSuffix = createIdGenerator(18);

export function generateRequestId(): string {
  return `req_${nextRequestSuffix()}`;
}

/**
 * Splits a request target into its path and its query string (without `?`); an absolute-form target
 * (`http://host/v1/messages`) is served like its origin-form, and a `#fragment` (which no target should
 * carry, but Node's parser lets through) is left out of both.
 */
export function splitTarget(url: string): { path: string; query: string } {
  if (url.startsWith('/') && !url.includes('#')) {
    const mark = url.indexOf('?');
    return mark === -1 ? { path: url, query: '' } : { path: url.slice(0, mark), query: url.slice(mark + 1) };
  }
  const { path, query } = parseRequestTarget(url);
  return { path, query };
}

function numberOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

/** Copies the numeric usage fields of a Messages `usage` object over `into`. */
export function mergeUsage(into: UsageRecord, usage: unknown): void {
  if (typeof usage !== 'object' || usage === null) return;
  const source = usage as Record<string, unknown>;
  const input = numberOrUndefined(source['input_tokens']);
  const output = numberOrUndefined(source['output_tokens']);
  const cacheCreation = numberOrUndefined(source['cache_creation_input_tokens']);
  const cacheRead = numberOrUndefined(source['cache_read_input_tokens']);
  if (input !== undefined) into.input_tokens = input;
  if (output !== undefined) into.output_tokens = output;
  if (cacheCreation !== undefined) into.cache_creation_input_tokens = cacheCreation;
  if (cacheRead !== undefined) into.cache_read_input_tokens = cacheRead;
}

/** `observer` (telemetry's, when any) that also keeps each body sent upstream in `bodies`. */
function withBodyLog(
  observer: ExchangeObserver | undefined,
  bodies: { attempt: number; body: string }[],
): ExchangeObserver {
  return {
    onAttemptStart: (attempt) => observer?.onAttemptStart?.(attempt),
    onAttemptEnd: (attempt) => observer?.onAttemptEnd?.(attempt),
    onAttemptBody: (attempt, body) => {
      observer?.onAttemptBody?.(attempt, body);
      bodies.push({ attempt: attempt.number, body });
    },
  };
}

/** What the exchange needs from the server around it. */
export interface ExchangeEnvironment {
  provider: ProviderName;
  logger: Logger;
  logBodies: boolean;
  generateRequestId: () => string;
  /** Metrics and traces, when enabled. */
  telemetry?: Telemetry | undefined;
  /** Refuses a body of the wrong type or encoding before it is read (see `check-request-headers.ts`). */
  checkBody?: (request: InboundRequest) => void;
  /** Keeps each finished `/v1/messages` exchange (the journal, the live view). @default none */
  recorder?: ExchangeRecorder | undefined;
}

/** Whether an exchange keeps its bodies: for the log (`logBodies`) or for a recorder (the journal). */
export function keepsBodies(environment: ExchangeEnvironment): boolean {
  return environment.logBodies || environment.recorder?.needsBodies === true;
}

/** The state of one exchange. */
export class Exchange {
  readonly ownRequestId: string;
  readonly startedMs = performance.now();
  readonly path: string;
  readonly query: string;
  model: string | undefined;
  isStream: boolean | undefined;
  usage: UsageRecord | undefined;
  /** The upstream's status and headers, once the transport reported them. */
  upstream: ResponseInfo | undefined;
  requestBodyText: string | undefined;
  /** With `logBodies`: each body sent upstream. */
  readonly upstreamBodies: { attempt: number; body: string }[] = [];
  /** With `logBodies`, for a stream: the message its events deliver. */
  transcript: StreamTranscript | undefined;
  /** The delivered message's `stop_reason`, for telemetry. */
  stopReason: string | undefined;
  /** Metrics and traces of this exchange, when enabled. */
  readonly telemetry: ExchangeTelemetry | undefined;
  /** The upstream attempts that failed and were retried, with why. */
  readonly retries: RetryRecord[] = [];
  #timeToFirstByteMs: number | undefined;
  #isEnded = false;

  constructor(
    readonly request: InboundRequest,
    readonly environment: ExchangeEnvironment,
  ) {
    this.ownRequestId = environment.generateRequestId();
    const { path, query } = splitTarget(request.url);
    this.path = path;
    this.query = query;
    this.telemetry = environment.telemetry?.startExchange({
      method: request.method,
      path,
      headers: request.headers,
    });
  }

  /** The answer can start going out now (its first byte exists): noted once, for telemetry. */
  answerReady(): void {
    this.#timeToFirstByteMs ??= performance.now() - this.startedMs;
  }

  /** The id the client sees: the upstream's `request-id` when it sent one, else the proxy's own. */
  get requestId(): string {
    return this.upstream?.headers['request-id'] ?? this.ownRequestId;
  }

  /**
   * Reads the body as a JSON object. Answers 400 for an empty body, bytes that are not UTF-8, nesting
   * too deep, invalid JSON (naming the parser's complaint) or a value that is not an object; 413 (from `readBody`) for a body over the limit.
   */
  async readJsonObject(): Promise<{ raw: Uint8Array; value: Record<string, unknown> }> {
    this.environment.checkBody?.(this.request);
    const raw = await this.request.readBody();
    if (raw.length === 0) throw proxyError(400, 'the request body is empty: expected a JSON object');
    const { text, value } = decodeJsonBody(raw);
    if (keepsBodies(this.environment)) this.requestBodyText = text;
    if (!isObject(value)) {
      throw proxyError(
        400,
        `the request body must be a JSON object, got ${Array.isArray(value) ? 'an array' : typeof value}`,
      );
    }
    const model = value['model'];
    if (typeof model === 'string') this.model = model;
    return { raw, value };
  }

  /** The options for the transport call: signal, the client's protocol headers, query, body bytes. */
  exchangeOptions(rawBody?: Uint8Array): ExchangeOptions {
    const headers: Record<string, string | string[]> = {};
    for (const name of FORWARDED_HEADERS) {
      const value = this.request.headers[name];
      if (value !== undefined) headers[name] = value;
    }
    const options: ExchangeOptions & WithCancellation = {
      headers,
      onResponse: (info) => {
        this.upstream = info;
      },
      onRetry: ({ attempt, error, delayMs }) => {
        const retry: RetryRecord = { attempt, error: error.code, reason: error.message, delayMs };
        if (error.code === 'MODEL_EHTTP') retry.status = error.status;
        if (error.deadline !== undefined) retry.deadline = error.deadline;
        this.retries.push(retry);
      },
    };
    const { cancellation } = this.request;
    const telemetry = keepsBodies(this.environment)
      ? withBodyLog(this.telemetry?.observer, this.upstreamBodies)
      : this.telemetry?.observer;
    const observer = withRepairLog(telemetry, this.environment.logger, () => this.requestId);
    if (observer !== undefined) options.observer = observer;
    if (cancellation !== undefined) options[CANCELLATION] = cancellation;
    else options.signal = this.request.signal;
    if (this.query !== '') options.query = this.query;
    if (rawBody !== undefined) options.rawBody = rawBody;
    return options;
  }

  /** Whether the client went away (or the server gave up on the exchange). */
  get clientGone(): boolean {
    return (this.request.cancellation ?? this.request.signal).aborted;
  }

  /** Response headers: content type, `request-id`, and the upstream's retry and rate-limit headers. */
  responseHeaders(contentType: string): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': contentType, 'request-id': this.requestId };
    if (this.upstream !== undefined) passBackHeaders(this.upstream.headers, headers);
    addRouteHeaders(this.upstream, headers);
    return headers;
  }

  /** A JSON answer, logged. */
  json(status: number, body: string, level: 'debug' | 'info' = 'info'): JsonResponse {
    this.answerReady();
    const response: JsonResponse = {
      kind: 'json',
      status,
      headers: this.responseHeaders('application/json'),
      body,
    };
    this.log(status, undefined, { responseBody: body }, level);
    return response;
  }

  /** The error answer for a failure before anything was sent, logged. */
  fail(error: unknown): JsonResponse {
    this.answerReady();
    const response = errorResponse(error, this.requestId, this.upstream?.headers);
    addRouteHeaders(this.upstream, response.headers);
    this.log(response.status, error, { responseBody: response.body });
    return response;
  }

  /** Whether the recorders keep this exchange: a `POST /v1/messages` (served as that route), once. */
  isRecorded = false;

  /** Hands the finished exchange to the recorder (at most once). */
  #record(record: ExchangeRecord, error: unknown, extra: { responseBody?: string }): void {
    this.isRecorded = false;
    const finished: {
      -readonly [Key in keyof FinishedExchange]: FinishedExchange[Key];
    } = {
      record,
      startedAtMs: Date.now() - (performance.now() - this.startedMs),
    };
    if (this.#timeToFirstByteMs !== undefined)
      finished.firstByteMs = Math.round(this.#timeToFirstByteMs * 10) / 10;
    if (this.requestBodyText !== undefined) finished.requestText = this.requestBodyText;
    if (this.upstreamBodies.length > 0) finished.upstreamBodies = this.upstreamBodies;
    const answer = extra.responseBody ?? this.transcript?.toJson();
    if (record.status >= 400 && extra.responseBody !== undefined) finished.errorText = extra.responseBody;
    else {
      if (answer !== undefined && keepsBodies(this.environment)) finished.responseText = answer;
      if (error !== undefined) finished.errorText = errorBodyText(error, this.requestId);
    }
    this.environment.recorder?.record(finished);
  }

  /** Writes the exchange's one log line. */
  log(
    status: number,
    error: unknown,
    extra: { responseBody?: string; clientClosed?: boolean } = {},
    level: 'debug' | 'info' = 'info',
  ): void {
    const record: ExchangeRecord = {
      requestId: this.requestId,
      method: this.request.method,
      path: this.path,
      provider: this.environment.provider,
      status,
      durationMs: Math.round((performance.now() - this.startedMs) * 10) / 10,
    };
    if (this.model !== undefined) record.model = this.model;
    if (this.isStream !== undefined) record.stream = this.isStream;
    if (this.upstream !== undefined) record.attempts = this.upstream.attempts;
    if (this.upstream?.upstreamModel !== undefined) record.upstreamModel = this.upstream.upstreamModel;
    if (this.upstream?.upstream !== undefined) record.upstream = this.upstream.upstream;
    if (this.upstream?.upstreamMaxTokens !== undefined)
      record.upstreamMaxTokens = this.upstream.upstreamMaxTokens;
    if (this.usage !== undefined) record.usage = this.usage;
    if (this.retries.length > 0) record.retries = this.retries;
    if (error !== undefined) {
      if (isTransportError(error)) {
        record.error = error.code;
        record.errorMessage = error.message;
      } else {
        record.errorMessage = 'internal error';
        this.environment.logger.error({ requestId: record.requestId, err: error }, 'internal error');
      }
    }
    if (extra.clientClosed === true) record.clientClosed = true;
    if (this.environment.logBodies) {
      if (this.requestBodyText !== undefined) record.requestBody = this.requestBodyText;
      if (this.upstreamBodies.length > 0) record.upstreamRequestBodies = this.upstreamBodies;
      const responseBody = extra.responseBody ?? this.transcript?.toJson();
      if (responseBody !== undefined) record.responseBody = responseBody;
    }
    logExchange(this.environment.logger, record, level);
    if (this.environment.recorder !== undefined && this.isRecorded) this.#record(record, error, extra);
    if (this.telemetry !== undefined && !this.#isEnded) {
      this.#isEnded = true;
      const outcome: ExchangeOutcome = { record };
      if (this.stopReason !== undefined) outcome.stopReason = this.stopReason;
      if (this.#timeToFirstByteMs !== undefined) outcome.timeToFirstByteMs = this.#timeToFirstByteMs;
      this.telemetry.end(outcome);
    }
  }
}
