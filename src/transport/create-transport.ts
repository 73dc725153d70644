/**
 * `createTransport`: reads the credentials once, picks the provider, and runs each exchange under its
 * deadlines, with cancellation and retries (one attempt loop for all: `run-attempts.ts`, run by
 * `exchange-runner.ts`). The exchanges themselves are `message-exchanges.ts` (send, stream) and
 * `provider-queries.ts` (count_tokens, the model list, the upstream's inspection).
 *
 * @module
 */
import type { ProviderName } from '../errors.js';
import type { MessageStreamEvent } from '../protocol/messages.js';
import { loadTokenCounter } from '../providers/load-token-counter.js';
import type { Provider } from '../providers/provider.js';
import { ExchangeRunner, defaultSleep, type RunnerSettings } from './exchange-runner.js';
import { createIdGenerator } from './id-generator.js';
import { createProvider } from './create-provider.js';
import { sendMessage, streamMessageBatches } from './message-exchanges.js';
import { readModelMapping } from './model-map.js';
import { readConfiguredCap } from './output-cap.js';
import { countTokens, inspectUpstream, listModels } from './provider-queries.js';
import { DEFAULT_DEADLINES, checkCount, resolveDeadlines } from './resolve-deadlines.js';
import { createRequestShaper } from './shape-request.js';
import { STREAM_BATCHES } from './stream-batches.js';
import type { TransportCore } from './transport-core.js';
import { createUpstreamCatalog, type UpstreamCatalog } from './upstream-catalog.js';
import { selectProvider, type ResolvedConfig } from './select-provider.js';
import { createRouter, upstreamSelection, type Router } from './routes/create-router.js';
import { describeRoutes, upstreamStates } from './routes/describe-routes.js';
import { inspectUpstreams } from './routes/inspect-upstreams.js';
import { resolveRoutesConfig, type ResolvedRoutes } from './routes/routes-config.js';
import type {
  CountTokensRequest,
  ExchangeOptions,
  MessagesRequestInput,
  ModelTransport,
  Selection,
  TransportOptions,
} from './types.js';

export { DEFAULT_DEADLINES };

const DEFAULT_MAX_RETRIES = 2;
/** How long one look at the upstream's model list and context window may take, for exchanges that need it. */
const CATALOG_TIMEOUT_MS = 5_000;
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** The selection as the caller may see it: the provider, why, and for `tpx` its dialect, token source and wire. */
function describeSelection(config: ResolvedConfig): Selection {
  return Object.freeze({
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
}

/** A URL as it may be shown: without a user name or password. */
function shownUrl(value: string): string {
  const url = new URL(value);
  url.username = '';
  url.password = '';
  return url.toString().replace(/\/+$/, '');
}

/** The upstream's base URL, as it may be shown; none for the `none` provider. */
function shownBaseUrl(config: ResolvedConfig): { baseUrl: string } | Record<string, never> {
  if (config.provider === 'none') return {};
  return { baseUrl: shownUrl(config.provider === 'tpx' ? config.tpx.baseUrl : config.anthropic.baseUrl) };
}

/** The runner's settings: the options over the defaults. Throws `MODEL_ECONFIG` for an invalid one. */
function runnerSettings(
  options: TransportOptions,
  env: Record<string, string | undefined>,
  provider: ProviderName,
): RunnerSettings {
  const deadlines = resolveDeadlines(DEFAULT_DEADLINES, options);
  checkCount(options.maxRetries, 'maxRetries');
  checkCount(options.maxResponseBytes, 'maxResponseBytes');
  return {
    provider,
    deadlines,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    random: options.random ?? Math.random,
    sleep: options.sleep ?? defaultSleep,
    env,
    upstreamHeaders: options.upstreamHeaders === undefined ? undefined : { ...options.upstreamHeaders },
  };
}

/**
 * The upstream's catalog, for a transport that may inspect its upstream (the `inspectUpstream` option):
 * each look is one exchange of its own, bounded and not retried. The none provider has nothing to
 * inspect, so it never gets one.
 */
function upstreamCatalog(provider: Provider, runner: ExchangeRunner): UpstreamCatalog | undefined {
  const inspect = provider.inspect?.bind(provider);
  if (inspect === undefined) return undefined;
  return createUpstreamCatalog(() =>
    runner.run({ timeoutMs: CATALOG_TIMEOUT_MS, maxRetries: 0 }, (context, report) =>
      inspect({}, context, report),
    ),
  );
}

/** The core of a transport with routes: the catch-all route's first target stands for the rest. */
function createRoutedCore(
  options: TransportOptions,
  runner: ExchangeRunner,
  routes: ResolvedRoutes,
): TransportCore {
  const router = createRouter(routes, {
    generateId: options.generateId ?? createIdGenerator(),
    observer: options.observer,
    catalogOf: (provider) =>
      options.inspectUpstream === true ? upstreamCatalog(provider, runner) : undefined,
    countText: loadTokenCounter,
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const main = router.catchAll[0]!;
  return {
    selected: 'tpx',
    provider: main.upstream.provider,
    runner,
    shaper: main.shaper,
    catalog: main.upstream.catalog,
    router,
  };
}

/** The selection of a transport with routes: `tpx`, described by its catch-all upstream. */
function routedSelection(routes: ResolvedRoutes): ResolvedConfig {
  const last = routes.routes[routes.routes.length - 1]!;
  const main = routes.upstreams.get(last.targets[0]!.upstream)!;
  const names = [...routes.upstreams.keys()].join(', ');
  return upstreamSelection(
    main,
    `${routes.source} names ${routes.upstreams.size} upstream${routes.upstreams.size === 1 ? '' : 's'} (${names}) and ${routes.routes.length} route${routes.routes.length === 1 ? '' : 's'}`,
  );
}

/** Everything the exchanges share, built from the options once. */
function createCore(
  options: TransportOptions,
  env: Record<string, string | undefined>,
  config: ResolvedConfig,
  routes: ResolvedRoutes | undefined,
): TransportCore {
  const runner = new ExchangeRunner(runnerSettings(options, env, config.provider));
  if (routes !== undefined) return createRoutedCore(options, runner, routes);
  const provider = createProvider(config, options.generateId ?? createIdGenerator(), options.observer);
  const catalog = options.inspectUpstream === true ? upstreamCatalog(provider, runner) : undefined;
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
  return { selected: config.provider, provider, runner, shaper, catalog };
}

/** The public stream: the batches, one event at a time. */
async function* eventsOf(batches: AsyncIterable<MessageStreamEvent[]>): AsyncGenerator<MessageStreamEvent> {
  for await (const batch of batches) {
    for (const event of batch) yield event;
  }
}

/**
 * Creates a transport. Reads `options.env` (default `process.env`) once: changing the environment
 * afterwards changes nothing. Throws `MODEL_ECONFIG` for a configuration that cannot work.
 */
export function createTransport(options: TransportOptions = {}): ModelTransport {
  const env = { ...(options.env ?? process.env) };
  const routes =
    options.routes === undefined
      ? undefined
      : resolveRoutesConfig(options.routes, options.routesSource ?? 'the routes option');
  const config = routes === undefined ? selectProvider(options, env) : routedSelection(routes);
  const core = createCore(options, env, config, routes);
  const router: Router | undefined = core.router;
  const streamBatches = (request: MessagesRequestInput, exchangeOptions?: ExchangeOptions) =>
    streamMessageBatches(core, request, exchangeOptions);
  return Object.freeze({
    provider: config.provider,
    selection:
      router === undefined
        ? describeSelection(config)
        : Object.freeze({ ...describeSelection(config), routes: describeRoutes(router) }),
    send: (request: MessagesRequestInput, exchangeOptions?: ExchangeOptions) =>
      sendMessage(core, request, exchangeOptions),
    countTokens: (request: CountTokensRequest, exchangeOptions?: ExchangeOptions) =>
      countTokens(core, request, exchangeOptions),
    listModels: (exchangeOptions?: ExchangeOptions) => listModels(core, exchangeOptions),
    inspectUpstream: (exchangeOptions?: ExchangeOptions) => inspectUpstream(core, exchangeOptions),
    upstreamPolicy: Object.freeze({ ...core.shaper.policy, ...shownBaseUrl(config) }),
    // A generator never throws on creation, so even a bad request surfaces from the iteration.
    stream: (
      request: MessagesRequestInput,
      exchangeOptions?: ExchangeOptions,
    ): AsyncIterable<MessageStreamEvent> => eventsOf(streamBatches(request, exchangeOptions)),
    ...(router === undefined
      ? {}
      : {
          upstreamStates: () => upstreamStates(router),
          inspectUpstreams: (exchangeOptions?: ExchangeOptions) =>
            inspectUpstreams(core.runner, router, exchangeOptions),
        }),
    [STREAM_BATCHES]: streamBatches,
    close: () => core.runner.close(),
  });
}
