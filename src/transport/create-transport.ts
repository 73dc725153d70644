/**
 * `createTransport`: reads the credentials once, picks the provider, and runs each exchange under its
 * deadlines, with cancellation and retries.
 *
 * @module
 */
import { setTimeout as delay } from 'node:timers/promises';
import { TransportError, isTransportError, toTransportError } from '../errors.js';
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import { validateMessagesRequest } from '../protocol/validate-messages.js';
import { checkPairing } from '../translate/check-pairing.js';
import { DIALECTS } from '../translate/dialects.js';
import { loadTokenCounter } from '../providers/load-token-counter.js';
import { createAnthropicProvider } from '../providers/anthropic.js';
import { createDispatcherPool, type AttemptContext } from '../providers/http-exchange.js';
import { noneProvider } from '../providers/none.js';
import type { Provider, ReportResponse } from '../providers/provider.js';
import { createTpxProvider } from '../providers/tpx.js';
import { redactValues, withRedactedErrors } from './redact-errors.js';
import { CANCELLATION, Cancellation, type WithCancellation } from '../providers/cancellation.js';
import { createIdGenerator } from './id-generator.js';
import { retryDelayMs } from './retry-delay.js';
import { readModelMapping } from './model-map.js';
import { readConfiguredCap } from './output-cap.js';
import { createRequestShaper, type ShapedRequest } from './shape-request.js';
import { STREAM_BATCHES } from './stream-batches.js';
import { createUpstreamCatalog } from './upstream-catalog.js';
import { selectProvider } from './select-provider.js';
import { createTokenSource } from '../providers/token-source.js';
import { observeTokenRefresh, startAttempt, type ObservedAttempt } from '../providers/observer.js';
import type {
  CountTokensRequest,
  Deadlines,
  ExchangeOptions,
  MessagesRequestInput,
  ModelTransport,
  Selection,
  TokenCount,
  TransportOptions,
  UpstreamReport,
} from './types.js';

/** Default deadlines, in milliseconds. */
export const DEFAULT_DEADLINES: Readonly<Deadlines> = Object.freeze({
  connectTimeoutMs: 10_000,
  firstByteTimeoutMs: 60_000,
  idleTimeoutMs: 120_000,
  timeoutMs: 600_000,
});

const DEFAULT_MAX_RETRIES = 2;
/** How long one look at the upstream's model list and context window may take, for exchanges that need it. */
const CATALOG_TIMEOUT_MS = 5_000;
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).then(
    () => undefined,
    () => undefined, // an abort is reported by the caller of sleep, from the signal's reason
  );
}

function checkDeadline(value: number | undefined, name: string): void {
  if (value !== undefined && (!Number.isFinite(value) || value < 0)) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `${name} must be a number of milliseconds ≥ 0, got ${String(value)}`,
    );
  }
}

function checkCount(value: number | undefined, name: string): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 0)) {
    throw new TransportError('MODEL_ECONFIG', `${name} must be a whole number ≥ 0, got ${String(value)}`);
  }
}

function resolveDeadlines(base: Deadlines, overrides: Partial<Deadlines>): Deadlines {
  const deadlines = { ...base };
  for (const name of ['connectTimeoutMs', 'firstByteTimeoutMs', 'idleTimeoutMs', 'timeoutMs'] as const) {
    const value = overrides[name];
    checkDeadline(value, name);
    if (value !== undefined) deadlines[name] = value;
  }
  return deadlines;
}

/** Validates the caller's request and its tool pairing; throws `MODEL_EINVAL` / `MODEL_EPAIRING`. */
function checkRequest(request: unknown): MessagesRequest {
  const validated = validateMessagesRequest(request);
  if (!validated.ok) {
    throw new TransportError('MODEL_EINVAL', `invalid Messages request: ${validated.message}`);
  }
  checkPairing(validated.value.messages);
  return validated.value;
}

/**
 * One exchange's control: a cancellation that fires on caller cancel or the total deadline, with the
 * right `TransportError` as its reason; `dispose()` clears the timer and the link to the caller. The
 * proxy hands over its client's {@link Cancellation} (under {@link CANCELLATION}) instead of a signal.
 */
function startExchange(deadlines: Deadlines, exchangeOptions: ExchangeOptions) {
  const cancellation = new Cancellation();
  const startedAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  if (deadlines.timeoutMs > 0) {
    timer = setTimeout(() => {
      cancellation.abort(
        new TransportError(
          'MODEL_ETIMEOUT',
          `the exchange did not finish within ${deadlines.timeoutMs} ms (total deadline)`,
          {
            deadline: 'total',
            retryable: false,
          },
        ),
      );
    }, deadlines.timeoutMs);
    timer.unref();
  }
  const caller = (exchangeOptions as WithCancellation)[CANCELLATION] ?? exchangeOptions.signal;
  const unlink =
    caller === undefined
      ? undefined
      : cancellation.follow(
          caller,
          () => new TransportError('MODEL_EABORTED', 'the exchange was cancelled by the caller'),
        );
  return {
    cancellation,
    startedAt,
    abort(reason: TransportError) {
      cancellation.abort(reason);
    },
    dispose() {
      if (timer !== undefined) clearTimeout(timer);
      unlink?.();
    },
  };
}

function abortedError(cancellation: Cancellation): TransportError {
  const reason: unknown = cancellation.reason;
  return isTransportError(reason)
    ? reason
    : new TransportError('MODEL_EABORTED', 'the exchange was cancelled by the caller');
}

/** Whether to try again, honouring `x-should-retry` both ways. */
function shouldRetry(error: TransportError): boolean {
  const hint = error.headers['x-should-retry'];
  if (hint === 'true') return true;
  if (hint === 'false') return false;
  return error.retryable;
}

/** A URL as it may be shown: without a user name or password. */
function shownUrl(value: string): string {
  const url = new URL(value);
  url.username = '';
  url.password = '';
  return url.toString().replace(/\/+$/, '');
}

/** The options for the upstream call of a shaped request: the caller's bytes no longer say what is sent. */
function shapedOptions(exchangeOptions: ExchangeOptions, shaped: ShapedRequest): ExchangeOptions {
  if (shaped.upstreamModel === undefined && shaped.upstreamMaxTokens === undefined) return exchangeOptions;
  // The spread keeps the symbol-keyed cancellation the proxy hands over.
  const { rawBody: _caller, onResponse, ...rest } = exchangeOptions;
  const options: ExchangeOptions = { ...rest };
  if (onResponse !== undefined) {
    options.onResponse = (info) => {
      const described = { ...info };
      if (shaped.upstreamModel !== undefined) described.upstreamModel = shaped.upstreamModel;
      if (shaped.upstreamMaxTokens !== undefined) described.upstreamMaxTokens = shaped.upstreamMaxTokens;
      onResponse(described);
    };
  }
  return options;
}

/**
 * Creates a transport. Reads `options.env` (default `process.env`) once: changing the environment
 * afterwards changes nothing. Throws `MODEL_ECONFIG` for a configuration that cannot work.
 */
export function createTransport(options: TransportOptions = {}): ModelTransport {
  const env = { ...(options.env ?? process.env) };
  const config = selectProvider(options, env);
  const selection: Selection = Object.freeze({
    provider: config.provider,
    reason: config.reason,
    ...(config.provider !== 'tpx'
      ? {}
      : {
          dialect: Object.freeze({ name: config.tpx.dialect, reason: config.tpx.dialectReason }),
          tokenSource: Object.freeze({
            kind: config.tpx.tokenSpec.kind,
            origin: config.tpx.tokenSpec.origin,
          }),
          wire: Object.freeze({ name: config.tpx.wire, reason: config.tpx.wireReason }),
        }),
  });
  const upstreamBaseUrl =
    config.provider === 'tpx'
      ? config.tpx.baseUrl
      : config.provider === 'anthropic'
        ? config.anthropic.baseUrl
        : undefined;
  const baseDeadlines = resolveDeadlines(DEFAULT_DEADLINES, options);
  checkCount(options.maxRetries, 'maxRetries');
  checkCount(options.maxResponseBytes, 'maxResponseBytes');
  const defaultMaxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  const generateId = options.generateId ?? createIdGenerator();
  const pool = createDispatcherPool(env);
  const upstreamHeaders = options.upstreamHeaders === undefined ? undefined : { ...options.upstreamHeaders };
  let closed = false;

  let provider: Provider;
  switch (config.provider) {
    // Upstreams echo credentials in their error text: no error leaves a provider with one in it.
    case 'anthropic': {
      const anthropic = config.anthropic;
      provider = withRedactedErrors(createAnthropicProvider(anthropic), redactValues([anthropic.apiKey]));
      break;
    }
    case 'tpx': {
      const tpx = config.tpx;
      const tokens = observeTokenRefresh(createTokenSource(tpx.tokenSpec), options.observer);
      provider = withRedactedErrors(
        createTpxProvider({
          tokens,
          baseUrl: tpx.baseUrl,
          model: tpx.model,
          generateId,
          dialect: DIALECTS[tpx.dialect],
          azureApiVersion: tpx.azureApiVersion,
          wire: tpx.wire,
        }),
        (text) => tokens.redact(text),
      );
      break;
    }
    case 'none':
      provider = noneProvider;
      break;
  }

  const inspectProvider = provider.inspect?.bind(provider);
  const catalog =
    options.inspectUpstream === true && inspectProvider !== undefined && config.provider !== 'none'
      ? createUpstreamCatalog(() =>
          runExchange({ timeoutMs: CATALOG_TIMEOUT_MS, maxRetries: 0 }, (context, report) =>
            inspectProvider({}, context, report),
          ),
        )
      : undefined;
  const shaper = createRequestShaper({
    // TPX_MODEL is the catch-all on the tpx path only; the map applies to both providers.
    mapping: readModelMapping(
      options.modelMap,
      env,
      config.provider === 'tpx' ? config.tpx.model : undefined,
    ),
    configuredCap: readConfiguredCap(options.maxOutputTokens, env),
    catalog,
    usesModelList: config.provider === 'tpx',
    countText: loadTokenCounter,
  });

  function attemptContext(
    cancellation: Cancellation,
    deadlines: Deadlines,
    observed?: ObservedAttempt,
  ): AttemptContext {
    const context: AttemptContext = {
      cancellation,
      deadlines,
      dispatcher: (ms) => pool.get(ms),
      maxResponseBytes,
      provider: config.provider,
      ...(upstreamHeaders === undefined ? {} : { upstreamHeaders }),
    };
    if (observed !== undefined) context.notes = observed.notes;
    return context;
  }

  function ensureOpen(): void {
    if (closed) throw new TransportError('MODEL_ECONFIG', 'this transport was closed; create a new one');
  }

  /** Waits before the next attempt, or explains why there is none. */
  async function backoff(
    error: TransportError,
    retryIndex: number,
    maxRetries: number,
    exchange: ReturnType<typeof startExchange>,
    deadlines: Deadlines,
  ): Promise<void> {
    if (retryIndex >= maxRetries || !shouldRetry(error) || exchange.cancellation.aborted) throw error;
    const wait = retryDelayMs({ retryIndex, headers: error.headers, nowMs: Date.now(), random: random() });
    if (deadlines.timeoutMs > 0 && Date.now() - exchange.startedAt + wait >= deadlines.timeoutMs) throw error;
    await sleep(wait, exchange.cancellation.signal);
    if (exchange.cancellation.aborted) throw abortedError(exchange.cancellation);
  }

  async function send(
    request: MessagesRequestInput,
    exchangeOptions: ExchangeOptions = {},
  ): Promise<Message> {
    ensureOpen();
    checkCount(exchangeOptions.maxRetries, 'maxRetries');
    // NoProvider: with no credentials every exchange fails at once, whatever the request says.
    if (config.provider === 'none')
      return noneProvider.send(
        request as MessagesRequest,
        exchangeOptions,
        attemptContext(new Cancellation(), baseDeadlines),
        () => {},
      );
    const checked = checkRequest(request);
    if (shaper.idle) {
      return runExchange(
        exchangeOptions,
        (context, report) => provider.send(checked, exchangeOptions, context, report),
        checked.model,
      );
    }
    const shaped = await shaper.shape(checked);
    const upstreamOptions = shapedOptions(exchangeOptions, shaped);
    const message = await runExchange(
      upstreamOptions,
      (context, report) => provider.send(shaped.request, upstreamOptions, context, report),
      shaped.request.model,
    );
    // The caller hears of the model it asked for; the log (through onResponse) records both.
    return shaped.upstreamModel === undefined ? message : { ...message, model: checked.model };
  }

  /** One streaming exchange, as the provider's batches (see `stream-batches.ts`). */
  async function* streamBatches(
    request: MessagesRequestInput,
    exchangeOptions: ExchangeOptions = {},
  ): AsyncGenerator<MessageStreamEvent[]> {
    ensureOpen();
    checkCount(exchangeOptions.maxRetries, 'maxRetries');
    if (config.provider === 'none') {
      yield* noneProvider.stream(
        request as MessagesRequest,
        exchangeOptions,
        attemptContext(new Cancellation(), baseDeadlines),
        () => {},
      );
      return;
    }
    const requested = checkRequest(request);
    const shaped: ShapedRequest = shaper.idle ? { request: requested } : await shaper.shape(requested);
    const checked = shaped.request;
    exchangeOptions = shapedOptions(exchangeOptions, shaped);
    const deadlines = resolveDeadlines(baseDeadlines, exchangeOptions);
    const maxRetries = exchangeOptions.maxRetries ?? defaultMaxRetries;
    const exchange = startExchange(deadlines, exchangeOptions);
    let delivered = false;
    let finished = false;
    try {
      for (let attempt = 0; ; attempt++) {
        if (exchange.cancellation.aborted) throw abortedError(exchange.cancellation);
        let status = 0;
        let headers: Record<string, string> = {};
        let reported = false;
        const report = () => {
          if (!reported) {
            reported = true;
            exchangeOptions.onResponse?.({ status, headers, attempts: attempt + 1 });
          }
        };
        const observed = startAttempt(exchangeOptions.observer, attempt + 1, config.provider, checked.model);
        const iterator = provider.stream(
          checked,
          exchangeOptions,
          attemptContext(exchange.cancellation, deadlines, observed),
          (s, h) => {
            status = s;
            headers = h;
          },
        );
        try {
          for (;;) {
            const next = await iterator.next();
            if (next.done === true) {
              finished = true;
              observed?.end(status);
              return;
            }
            if (!delivered) {
              report();
              // The caller hears of the model it asked for, in message_start.
              if (shaped.upstreamModel !== undefined) {
                for (const event of next.value) {
                  if (event.type === 'message_start')
                    event.message = { ...event.message, model: requested.model };
                }
              }
            }
            delivered = true;
            yield next.value;
          }
        } catch (raw) {
          const error = exchange.cancellation.aborted
            ? abortedError(exchange.cancellation)
            : toTransportError(raw);
          observed?.end(status, error);
          // Never retry once anything reached the caller: the caller would see the exchange twice.
          if (delivered) throw error;
          try {
            await backoff(error, attempt, maxRetries, exchange, deadlines);
          } catch (final) {
            if (status !== 0) report();
            throw final;
          }
        } finally {
          // A consumer that stops early (break / return) ends the upstream request too.
          if (!exchange.cancellation.aborted) await iterator.return(undefined);
          if (observed?.isEnded === false) {
            observed.end(status, new TransportError('MODEL_EABORTED', 'the stream was closed by the caller'));
          }
        }
      }
    } finally {
      // A stream the consumer left early still has an upstream request to end; a finished one has not,
      // and skipping the abort spares building an error (and its stack) on every normal exchange.
      if (!finished && !exchange.cancellation.aborted) {
        exchange.abort(new TransportError('MODEL_EABORTED', 'the stream was closed by the caller'));
      }
      exchange.dispose();
    }
  }

  /**
   * One non-streaming exchange (a message, count_tokens, models) under its deadlines, with retries and
   * the `onResponse` report; `run` makes one attempt.
   */
  async function runExchange<T>(
    exchangeOptions: ExchangeOptions,
    run: (context: AttemptContext, report: ReportResponse) => Promise<T>,
    model?: string,
  ): Promise<T> {
    ensureOpen();
    const deadlines = resolveDeadlines(baseDeadlines, exchangeOptions);
    const maxRetries = exchangeOptions.maxRetries ?? defaultMaxRetries;
    const exchange = startExchange(deadlines, exchangeOptions);
    try {
      for (let attempt = 0; ; attempt++) {
        if (exchange.cancellation.aborted) throw abortedError(exchange.cancellation);
        let status = 0;
        let headers: Record<string, string> = {};
        const report = () => {
          if (status !== 0) exchangeOptions.onResponse?.({ status, headers, attempts: attempt + 1 });
        };
        const observed = startAttempt(exchangeOptions.observer, attempt + 1, config.provider, model);
        try {
          const result = await run(attemptContext(exchange.cancellation, deadlines, observed), (s, h) => {
            status = s;
            headers = h;
          });
          observed?.end(status);
          report();
          return result;
        } catch (raw) {
          const error = exchange.cancellation.aborted
            ? abortedError(exchange.cancellation)
            : toTransportError(raw);
          observed?.end(status, error);
          try {
            await backoff(error, attempt, maxRetries, exchange, deadlines);
          } catch (final) {
            report();
            throw final;
          }
        }
      }
    } finally {
      exchange.dispose();
    }
  }

  async function countTokens(
    request: CountTokensRequest,
    exchangeOptions: ExchangeOptions = {},
  ): Promise<TokenCount> {
    ensureOpen();
    // NoProvider: with no credentials the answer is the 401, whatever the request says. Otherwise the
    // Messages validator checks it, with a max_tokens added since count_tokens requests carry none.
    const validated =
      config.provider === 'none' ? undefined : validateMessagesRequest({ ...request, max_tokens: 1 });
    if (validated?.ok === false)
      throw new TransportError('MODEL_EINVAL', `invalid count_tokens request: ${validated.message}`);
    const count = provider.countTokens?.bind(provider);
    if (count === undefined) {
      throw new TransportError('MODEL_EINVAL', `the ${provider.name} provider cannot count tokens`, {
        status: 404,
        type: 'not_found_error',
      });
    }
    return runExchange(
      exchangeOptions,
      (context, report) => count(request, exchangeOptions, context, report),
      request.model,
    );
  }

  async function listModels(exchangeOptions: ExchangeOptions = {}): Promise<unknown> {
    ensureOpen();
    const list = provider.listModels?.bind(provider);
    if (list === undefined) {
      throw new TransportError('MODEL_EINVAL', `the ${provider.name} provider cannot list models`, {
        status: 404,
        type: 'not_found_error',
      });
    }
    return runExchange(exchangeOptions, (context, report) => list(exchangeOptions, context, report));
  }

  async function inspectUpstream(exchangeOptions: ExchangeOptions = {}): Promise<UpstreamReport> {
    ensureOpen();
    const inspect = provider.inspect?.bind(provider);
    if (config.provider === 'none' || inspect === undefined) {
      throw new TransportError('MODEL_EAUTH', `the ${provider.name} provider has no upstream to inspect`, {
        status: 401,
        type: 'authentication_error',
      });
    }
    const report = await runExchange(exchangeOptions, (context, reportResponse) =>
      inspect(exchangeOptions, context, reportResponse),
    );
    catalog?.remember(report);
    return report;
  }

  /** The public stream: the batches, one event at a time. */
  async function* stream(
    request: MessagesRequestInput,
    exchangeOptions?: ExchangeOptions,
  ): AsyncGenerator<MessageStreamEvent> {
    for await (const batch of streamBatches(request, exchangeOptions)) {
      for (const event of batch) yield event;
    }
  }

  return Object.freeze({
    provider: config.provider,
    selection,
    send,
    countTokens,
    listModels,
    inspectUpstream,
    upstreamPolicy: Object.freeze({
      ...shaper.policy,
      ...(upstreamBaseUrl === undefined ? {} : { baseUrl: shownUrl(upstreamBaseUrl) }),
    }),
    stream(
      request: MessagesRequestInput,
      exchangeOptions?: ExchangeOptions,
    ): AsyncIterable<MessageStreamEvent> {
      // A generator never throws on creation, so even a bad request surfaces from the iteration.
      return stream(request, exchangeOptions);
    },
    [STREAM_BATCHES]: streamBatches,
    async close() {
      closed = true;
      await pool.close();
    },
  });
}
