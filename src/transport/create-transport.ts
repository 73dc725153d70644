/**
 * `createTransport`: reads the credentials once, picks the provider, and runs each exchange under its
 * deadlines, with cancellation and retries (one attempt loop for all: `run-attempts.ts`).
 *
 * @module
 */
import { setTimeout as delay } from 'node:timers/promises';
import { TransportError } from '../errors.js';
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import { validateMessagesRequest } from '../protocol/validate-messages.js';
import { checkPairing } from '../translate/check-pairing.js';
import { loadTokenCounter } from '../providers/load-token-counter.js';
import { createDispatcherPool } from '../providers/dispatcher-pool.js';
import type { AttemptContext } from '../providers/http-exchange.js';
import { noneProvider } from '../providers/none.js';
import type { ReportResponse } from '../providers/provider.js';
import { Cancellation } from '../providers/cancellation.js';
import type { ObservedAttempt } from '../providers/observer.js';
import { createIdGenerator } from './id-generator.js';
import { createProvider } from './create-provider.js';
import { readModelMapping } from './model-map.js';
import { readConfiguredCap } from './output-cap.js';
import { DEFAULT_DEADLINES, checkCount, resolveDeadlines } from './resolve-deadlines.js';
import { runAttempts, singleValue, type AttemptLoop } from './run-attempts.js';
import { createRequestShaper, type ShapedRequest } from './shape-request.js';
import { shapedOptions } from './shaped-options.js';
import { STREAM_BATCHES } from './stream-batches.js';
import { createUpstreamCatalog } from './upstream-catalog.js';
import { selectProvider } from './select-provider.js';
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

export { DEFAULT_DEADLINES };

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

/** Validates the caller's request and its tool pairing; throws `MODEL_EINVAL` / `MODEL_EPAIRING`. */
function checkRequest(request: unknown): MessagesRequest {
  const validated = validateMessagesRequest(request);
  if (!validated.ok) {
    throw new TransportError('MODEL_EINVAL', `invalid Messages request: ${validated.message}`);
  }
  checkPairing(validated.value.messages);
  return validated.value;
}

/** A URL as it may be shown: without a user name or password. */
function shownUrl(value: string): string {
  const url = new URL(value);
  url.username = '';
  url.password = '';
  return url.toString().replace(/\/+$/, '');
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

  const provider = createProvider(config, generateId, options.observer);

  // The none provider has nothing to inspect, so it never gets a catalog.
  const inspectProvider = provider.inspect?.bind(provider);
  const catalog =
    options.inspectUpstream === true && inspectProvider !== undefined
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
    const upstreamOptions = shapedOptions(exchangeOptions, shaped);
    let first = true;
    for await (const batch of runAttempts(attemptLoop(upstreamOptions, checked.model), (context, report) =>
      provider.stream(checked, upstreamOptions, context, report),
    )) {
      // The caller hears of the model it asked for, in message_start.
      if (first && shaped.upstreamModel !== undefined) {
        for (const event of batch) {
          if (event.type === 'message_start') event.message = { ...event.message, model: requested.model };
        }
      }
      first = false;
      yield batch;
    }
  }

  /** The attempt loop's settings for one exchange: the transport's, with the call's options over them. */
  function attemptLoop(exchangeOptions: ExchangeOptions, model: string | undefined): AttemptLoop {
    return {
      deadlines: resolveDeadlines(baseDeadlines, exchangeOptions),
      maxRetries: exchangeOptions.maxRetries ?? defaultMaxRetries,
      exchangeOptions,
      provider: config.provider,
      model,
      context: attemptContext,
      random,
      sleep,
    };
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
    let result: { value: T } | undefined;
    for await (const value of runAttempts(attemptLoop(exchangeOptions, model), (context, report) =>
      singleValue(() => run(context, report)),
    )) {
      result = { value };
    }
    // The loop ends either with the one value delivered or with the error that ended the exchange.
    return result!.value;
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
    // Only the none provider has no inspection: it has no upstream.
    if (inspect === undefined) {
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
