/**
 * `startServer`: the local Messages-compatible proxy behind `tpx serve`, on `node:http`.
 *
 * ```ts
 * const server = await startServer({ transport: createTransport() });
 * // Claude Code: ANTHROPIC_BASE_URL=http://127.0.0.1:8787
 * // SDK:         new Anthropic({ baseURL: server.url, apiKey: 'unused' })
 * await server.close();
 * ```
 *
 * Signal handling is the CLI's; `close()` is the graceful part: it stops accepting connections, lets the
 * exchanges in flight finish (up to `shutdownGraceMs`), then cancels what is left and closes every socket.
 *
 * @module
 */
import { createServer, type Server, type ServerOptions } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { TransportError } from '../errors.js';
import type { ModelTransport } from '../transport/types.js';
import type { Cancellation } from '../providers/cancellation.js';
import { createServerLogger } from './logger.js';
import { pointsAtListener } from './loop-guard.js';
import { createMessagesHandler } from './messages-handler.js';
import { DEFAULT_PING_INTERVAL_MS } from './keep-alive.js';
import { answerClientError } from './answer-client-error.js';
import { createNodeListener, responseStartedOn } from './node-adapter.js';
import { withOperationalRoutes, type MetricsSource } from './operational-routes.js';
import type { Telemetry } from '../telemetry/exchange-telemetry.js';
import { createGenAiTelemetry, genAiProviderName } from '../telemetry/genai-telemetry.js';
import type { ProxyHandler } from './types.js';
import { combineRecorders } from './exchange-recorder.js';
import { LiveExchanges, type LiveExchangeSource, type LiveView } from './live-view.js';
import { JournalWriter, type JournalOptions } from './journal-writer.js';

/** Options of {@link startServer}. */
export interface ServeOptions {
  /** The transport every exchange goes through; its start-up credentials are the only ones used upstream. */
  transport: ModelTransport;
  /**
   * Interface to listen on. Anything but a loopback address needs `proxyToken` (or `insecureNoAuth`).
   * @default '127.0.0.1'
   */
  host?: string;
  /** Port to listen on; `0` picks a free one (see `RunningServer.port`). @default 8787 */
  port?: number;
  /**
   * When set, clients must present this token as `x-api-key` or `Authorization: Bearer` (compared in
   * constant time); others get a Messages 401. `tpx serve` passes `TPX_PROXY_TOKEN`. An empty string
   * counts as absent. @default undefined (no inbound check)
   */
  proxyToken?: string;
  /** Largest request body accepted; larger ones get 413 `request_too_large`. @default 32 MiB */
  maxRequestBytes?: number;
  /**
   * Longest wait for the next piece of a request body, in ms: a body that stops arriving for longer is
   * answered 408 and its connection closed, and request headers must arrive within the same time (at
   * most 60 s). `tpx serve` passes the idle deadline (`TPX_IDLE_TIMEOUT`). 0 leaves only node's own
   * limits (5 minutes per request). @default 120_000, the transport's default idle deadline
   */
  bodyIdleTimeoutMs?: number;
  /** Where exchange lines go; `false` for none. @default a pino logger writing JSON to stdout */
  logger?: Logger | false;
  /** Log request and JSON response bodies. A debugging aid: bodies hold whole conversations. @default false */
  logBodies?: boolean;
  /** How long `close()` lets in-flight exchanges run before cutting them off, in ms. @default 10_000 */
  shutdownGraceMs?: number;
  /** Allow a non-loopback `host` without `proxyToken`: anyone who can reach it uses your credentials. @default false */
  insecureNoAuth?: boolean;
  /**
   * Metrics and traces of each exchange; `false` for none. @default spans and GenAI histograms through
   * the OpenTelemetry API (`@opentelemetry/api`), recorded by whichever SDK this process registered:
   * an application with its own SDK gets the proxy's spans inside its own traces (see
   * `docs/observability.md`); without one they cost next to nothing.
   */
  telemetry?: Telemetry | false;
  /**
   * Serve `GET /metrics` on this port from this source (behind the proxy token when one is set).
   * @default not served here
   */
  metrics?: MetricsSource;
  /**
   * How long `close()` keeps accepting new connections after `/readyz` turned false, in ms, so that a
   * load balancer's health check sees the drain before connections are refused. @default 0
   */
  drainDelayMs?: number;
  /**
   * While the upstream is silent, send a stream's client an `event: ping` frame after this many ms
   * without a write, so that idle timeouts between the client and the proxy do not cut it (see
   * `keep-alive.ts`). 0 turns pings off. @default 15_000
   */
  pingIntervalMs?: number;
  /**
   * This proxy's instance id. Give the transport the same one as its hop header
   * (`upstreamHeaders: { [HOP_HEADER]: instanceId }`): a request that comes back carrying it is answered
   * 508 at once. @default undefined (no loop check by id; a base URL that is this proxy is still refused)
   */
  instanceId?: string;
  /**
   * Origins (`https://app.example.com`) whose web pages may call the proxy from a browser; a request
   * with any other `Origin` header gets 403. `tpx serve --allow-origin` / `TPX_ALLOWED_ORIGINS`.
   * @default none
   */
  allowedOrigins?: readonly string[];
  /**
   * Names clients may address the proxy by besides loopback names and the listen address (the `Host`
   * header); without a proxy token any other name gets 400, which keeps DNS-rebinding pages out.
   * `tpx serve --public-host` / `TPX_PUBLIC_HOSTS`. @default none
   */
  publicHosts?: readonly string[];
  /**
   * Append one JSON line per `POST /v1/messages` exchange to files in `journal.dir` (see
   * `docs/journal.md`): `tpx serve --journal DIR`. Written off the exchanges' path; a journal that
   * cannot be written is logged once and never fails an exchange. @default no journal
   */
  journal?: Omit<JournalOptions, 'logger'>;
  /**
   * How many of the latest exchanges `GET /tpx/exchanges` and the `GET /tpx/status` page show (kept in
   * memory); 0 turns the live view off. `tpx serve --live-exchanges`. @default 200
   */
  liveExchanges?: number;
  /**
   * Where the live view's exchanges come from, given this process's: with `--workers`, every worker's
   * (`live-view-cluster.ts`). @default this process's
   */
  liveExchangeSource?: (local: LiveExchanges) => LiveExchangeSource;
}

/** A listening proxy. */
export interface RunningServer {
  /** The base URL for clients, e.g. `http://127.0.0.1:8787` (the SDK's `baseURL`; no `/v1`). */
  url: string;
  /** The port actually bound (useful with `port: 0`). */
  port: number;
  /**
   * Stops accepting connections, lets in-flight exchanges finish for up to `shutdownGraceMs`, then
   * cancels the rest and destroys every socket. Idempotent. Does not close the transport.
   */
  close(): Promise<void>;
}

const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_PORT = 8787;
const DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024;
const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
const DEFAULT_BODY_IDLE_TIMEOUT_MS = 120_000;
/** node's own default wait for request headers. */
const NODE_HEADERS_TIMEOUT_MS = 60_000;
/** node's own default for how often it checks those timeouts. */
const NODE_CHECK_INTERVAL_MS = 30_000;

/** Whether `host` names the loopback interface only. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  switch (isIP(bare)) {
    case 4:
      return bare.startsWith('127.');
    case 6: {
      const lower = bare.toLowerCase();
      return lower === '::1' || lower === '0:0:0:0:0:0:0:1' || lower.startsWith('::ffff:127.');
    }
    default:
      return false;
  }
}

function checkOptions(options: ServeOptions): void {
  const { port, maxRequestBytes, shutdownGraceMs } = options;
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
    throw new TransportError('MODEL_ECONFIG', `port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  if (maxRequestBytes !== undefined && (!Number.isInteger(maxRequestBytes) || maxRequestBytes <= 0)) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `maxRequestBytes must be a positive integer, got ${String(maxRequestBytes)}`,
    );
  }
  if (
    options.pingIntervalMs !== undefined &&
    (!Number.isFinite(options.pingIntervalMs) || options.pingIntervalMs < 0)
  ) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `pingIntervalMs must be a number of milliseconds ≥ 0, got ${String(options.pingIntervalMs)}`,
    );
  }
  if (
    options.drainDelayMs !== undefined &&
    (!Number.isFinite(options.drainDelayMs) || options.drainDelayMs < 0)
  ) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `drainDelayMs must be a number of milliseconds ≥ 0, got ${String(options.drainDelayMs)}`,
    );
  }
  if (
    options.bodyIdleTimeoutMs !== undefined &&
    (!Number.isFinite(options.bodyIdleTimeoutMs) || options.bodyIdleTimeoutMs < 0)
  ) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `bodyIdleTimeoutMs must be a number of milliseconds ≥ 0, got ${String(options.bodyIdleTimeoutMs)}`,
    );
  }
  const { liveExchanges } = options;
  if (liveExchanges !== undefined && (!Number.isSafeInteger(liveExchanges) || liveExchanges < 0)) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `liveExchanges must be a whole number of exchanges ≥ 0, got ${String(liveExchanges)}`,
    );
  }
  if (shutdownGraceMs !== undefined && (!Number.isFinite(shutdownGraceMs) || shutdownGraceMs < 0)) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `shutdownGraceMs must be a number of milliseconds ≥ 0, got ${String(shutdownGraceMs)}`,
    );
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(
        new TransportError(
          'MODEL_ECONFIG',
          `cannot listen on ${host}:${port}: ${error.code ?? error.message}`,
          { cause: error },
        ),
      );
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/** Refuses to open the proxy beyond loopback without a token, unless the operator insisted. */
function checkExposure(
  host: string,
  proxyToken: string | undefined,
  insecureNoAuth: boolean | undefined,
): void {
  if (isLoopbackHost(host) || proxyToken !== undefined || insecureNoAuth === true) return;
  throw new TransportError(
    'MODEL_ECONFIG',
    `refusing to listen on ${host} without a proxy token: anyone who can reach it would use this proxy's model credentials. ` +
      'Set TPX_PROXY_TOKEN (the proxyToken option) so that clients must present it, listen on 127.0.0.1, ' +
      'or pass --insecure-no-auth (insecureNoAuth) if the network is yours alone',
  );
}

/** The telemetry of each exchange: the given one, none for `false`, else spans through the OpenTelemetry API. */
function telemetryOf(options: ServeOptions): Telemetry | undefined {
  if (options.telemetry === false) return undefined;
  if (options.telemetry !== undefined) return options.telemetry;
  const { selection } = options.transport;
  return createGenAiTelemetry({
    providerName: genAiProviderName(selection.provider, selection.dialect?.name),
  });
}

/** The exchanges in flight and the state of a drain, shared by the socket listener and `close()`. */
class Lifecycle {
  readonly inFlight = new Set<Cancellation>();
  /** `/readyz` answers 503 from here on. */
  isDraining = false;
  /** Answers close their connection from here on. */
  isClosing = false;
  /** Called when the last exchange in flight ends during a close. */
  onIdle: (() => void) | undefined;
}

/** What {@link buildHandler} needs besides the options. */
interface HandlerContext {
  host: string;
  proxyToken: string | undefined;
  logger: Logger;
  pingIntervalMs: number;
  lifecycle: Lifecycle;
  /** The proxy's URL, known once it listens (the loop message names it). */
  own: { url?: string };
  /** The journal, when on. */
  journal: JournalWriter | undefined;
}

const DEFAULT_LIVE_EXCHANGES = 200;

/** The live view of `options`, recording into a ring of its own; `undefined` when it is off. */
function liveViewOf(options: ServeOptions): { view: LiveView; recorder: LiveExchanges } | undefined {
  const capacity = options.liveExchanges ?? DEFAULT_LIVE_EXCHANGES;
  if (capacity === 0) return undefined;
  const recorder = new LiveExchanges(capacity);
  const { transport } = options;
  const { selection, upstreamPolicy } = transport;
  const source = options.liveExchangeSource?.(recorder) ?? recorder;
  const routes = selection.routes;
  if (routes !== undefined) {
    // With routes: every upstream, its breaker as it stands when the view is asked.
    const view: LiveView = {
      source,
      get upstreams() {
        const states = transport.upstreamStates?.() ?? [];
        return routes.upstreams.map((described) => ({
          name: described.name,
          provider: 'tpx',
          baseUrl: described.baseUrl,
          breaker: states.find((state) => state.name === described.name)?.state ?? null,
        }));
      },
    };
    return { view, recorder };
  }
  const upstream: LiveView['upstreams'][number] = {
    name: selection.provider === 'none' ? 'none' : 'default',
    provider: selection.provider,
    breaker: null,
  };
  if (upstreamPolicy?.baseUrl !== undefined) upstream.baseUrl = upstreamPolicy.baseUrl;
  return { view: { source, upstreams: [upstream] }, recorder };
}

/** The Messages handler with the operational routes in front of it. */
function buildHandler(options: ServeOptions, context: HandlerContext) {
  const { host, proxyToken, own } = context;
  const live = liveViewOf(options);
  const messages = createMessagesHandler({
    recorder: combineRecorders([context.journal, live?.recorder]),
    liveView: live?.view,
    transport: options.transport,
    proxyToken,
    logger: context.logger,
    logBodies: options.logBodies ?? false,
    telemetry: telemetryOf(options),
    pingIntervalMs: context.pingIntervalMs,
    ...(options.instanceId === undefined ? {} : { instanceId: options.instanceId }),
    get ownUrl() {
      return own.url;
    },
    requestCheck: {
      hasProxyToken: proxyToken !== undefined,
      listenHost: host,
      ...(options.allowedOrigins === undefined ? {} : { allowedOrigins: options.allowedOrigins }),
      ...(options.publicHosts === undefined ? {} : { publicHosts: options.publicHosts }),
    },
  });
  const upstreamStates = options.transport.upstreamStates?.bind(options.transport);
  return withOperationalRoutes(messages, {
    isReady: () => !context.lifecycle.isDraining,
    metrics: options.metrics,
    proxyToken,
    readyDetail: upstreamStates === undefined ? undefined : () => ({ upstreams: upstreamStates() }),
  });
}

/**
 * node's server options: headers that trickle in are cut as soon as a stalled body would be (node
 * checks its timeouts every `connectionsCheckingInterval`, so that bounds how late the cut comes).
 */
function nodeServerOptions(bodyIdleTimeoutMs: number): ServerOptions {
  return {
    noDelay: true,
    // A missing Host is answered by the handler, in the Messages error shape, not by node's bare 400.
    requireHostHeader: false,
    ...(bodyIdleTimeoutMs > 0
      ? {
          headersTimeout: Math.min(NODE_HEADERS_TIMEOUT_MS, bodyIdleTimeoutMs),
          connectionsCheckingInterval: Math.min(
            NODE_CHECK_INTERVAL_MS,
            Math.max(100, Math.ceil(bodyIdleTimeoutMs / 4)),
          ),
        }
      : {}),
  };
}

/** The HTTP server: the handler on node's socket layer, told of each exchange for graceful shutdown. */
function createHttpServer(
  options: ServeOptions,
  handler: ProxyHandler,
  lifecycle: Lifecycle,
  pingIntervalMs: number,
): Server {
  const bodyIdleTimeoutMs = options.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS;
  const server: Server = createServer(
    nodeServerOptions(bodyIdleTimeoutMs),
    createNodeListener(handler, {
      maxRequestBytes: options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
      bodyIdleTimeoutMs,
      pingIntervalMs,
      isClosing: () => lifecycle.isClosing,
      onExchangeStart: (cancellation) => lifecycle.inFlight.add(cancellation),
      onExchangeEnd: (cancellation) => {
        lifecycle.inFlight.delete(cancellation);
        if (lifecycle.isClosing) {
          // A connection whose exchange just ended is idle now: close it instead of keeping it alive.
          server.closeIdleConnections();
          if (lifecycle.inFlight.size === 0) lifecycle.onIdle?.();
        }
      },
    }),
  );
  // What node's parser refuses is answered in the Messages error shape, not as a bare 400.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) =>
    answerClientError(error, socket, responseStartedOn(socket)),
  );
  return server;
}

/** Closes `server` and refuses to serve when the upstream base URL is this very listener. */
async function refuseLoopToSelf(server: Server, transport: ModelTransport, host: string, port: number) {
  const upstreamUrl = transport.upstreamPolicy?.baseUrl;
  if (upstreamUrl === undefined || !pointsAtListener(upstreamUrl, host, port)) return;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const variable = transport.provider === 'anthropic' ? 'ANTHROPIC_BASE_URL' : 'TPX_BASE_URL';
  throw new TransportError(
    'MODEL_ECONFIG',
    `${variable} (${upstreamUrl}) is this proxy's own address: it would forward every request to itself. ` +
      `Unset it in this shell (it was probably exported for a client: unset ANTHROPIC_BASE_URL ANTHROPIC_API_KEY), ` +
      'or point it at the real upstream',
  );
}

/** Waits for the exchanges in flight to end, at most `graceMs`; resolves to whether they all did. */
async function waitForInFlight(lifecycle: Lifecycle, graceMs: number): Promise<boolean> {
  if (lifecycle.inFlight.size === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve) => {
    lifecycle.onIdle = resolve;
    timer = setTimeout(resolve, graceMs);
  });
  clearTimeout(timer);
  return lifecycle.inFlight.size === 0;
}

/**
 * The graceful close: `/readyz` turns 503 (and connections are still accepted for `drainDelayMs`),
 * then the listener closes, in-flight exchanges get `shutdownGraceMs` to finish, and the rest are
 * cancelled before every socket is closed.
 */
async function shutdown(
  server: Server,
  options: ServeOptions,
  lifecycle: Lifecycle,
  logger: Logger,
  url: string,
) {
  lifecycle.isDraining = true;
  const drainDelayMs = options.drainDelayMs ?? 0;
  if (drainDelayMs > 0) {
    logger.info({ drainDelayMs }, 'draining: /readyz answers 503, still accepting connections');
    await new Promise((resolve) => setTimeout(resolve, drainDelayMs));
  }
  lifecycle.isClosing = true;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const shutdownGraceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  if (!(await waitForInFlight(lifecycle, shutdownGraceMs))) {
    logger.warn(
      { inFlight: lifecycle.inFlight.size, shutdownGraceMs },
      'shutdown grace period over: cancelling exchanges in flight',
    );
    for (const cancellation of lifecycle.inFlight) {
      cancellation.abort(new TransportError('MODEL_EABORTED', 'the proxy is shutting down'));
    }
  }
  server.closeAllConnections();
  await closed;
  logger.info({ url }, 'closed');
}

/**
 * Starts the proxy and resolves once it listens.
 *
 * @throws TransportError `MODEL_ECONFIG` for invalid options, for a non-loopback `host` without
 * `proxyToken` (unless `insecureNoAuth`), or when the address cannot be bound.
 */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  checkOptions(options);
  const host = options.host ?? DEFAULT_HOST;
  const proxyToken = options.proxyToken === '' ? undefined : options.proxyToken;
  checkExposure(host, proxyToken, options.insecureNoAuth);
  const logger = createServerLogger(options.logger);
  const pingIntervalMs = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
  const lifecycle = new Lifecycle();
  const own: { url?: string } = {};
  const journal =
    options.journal === undefined ? undefined : new JournalWriter({ ...options.journal, logger });
  const handler = buildHandler(options, {
    host,
    proxyToken,
    logger,
    pingIntervalMs,
    lifecycle,
    own,
    journal,
  });
  const server = createHttpServer(options, handler, lifecycle, pingIntervalMs);
  await listen(server, options.port ?? DEFAULT_PORT, host);
  const { port } = server.address() as AddressInfo;
  const url = `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  own.url = url;
  await refuseLoopToSelf(server, options.transport, host, port);
  const { selection } = options.transport;
  logger.info(
    {
      url,
      provider: selection.provider,
      reason: selection.reason,
      inboundAuth: proxyToken === undefined ? 'none' : 'proxy token',
    },
    'listening',
  );
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      closing ??= shutdown(server, options, lifecycle, logger, url).then(() => journal?.close());
      return closing;
    },
  };
}
