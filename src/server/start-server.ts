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
import { createServer, type Server } from 'node:http';
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
import type { Telemetry } from './telemetry.js';

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
  /** Metrics and traces of each exchange (see `metrics.ts`, `tracing.ts`). @default none */
  telemetry?: Telemetry;
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
  if (!isLoopbackHost(host) && proxyToken === undefined && options.insecureNoAuth !== true) {
    throw new TransportError(
      'MODEL_ECONFIG',
      `refusing to listen on ${host} without a proxy token: anyone who can reach it would use this proxy's model credentials. ` +
        'Set TPX_PROXY_TOKEN (the proxyToken option) so that clients must present it, listen on 127.0.0.1, ' +
        'or pass --insecure-no-auth (insecureNoAuth) if the network is yours alone',
    );
  }
  const logger = createServerLogger(options.logger);
  const shutdownGraceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  const pingIntervalMs = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
  const inFlight = new Set<Cancellation>();
  let isClosing = false;
  let isDraining = false;
  let onIdle: (() => void) | undefined;

  // Known once listening; the loop message names it.
  const own: { url?: string } = {};
  const handler = withOperationalRoutes(
    createMessagesHandler({
      transport: options.transport,
      proxyToken,
      logger,
      logBodies: options.logBodies ?? false,
      telemetry: options.telemetry,
      pingIntervalMs,
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
    }),
    { isReady: () => !isDraining, metrics: options.metrics, proxyToken },
  );
  const bodyIdleTimeoutMs = options.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS;
  const server = createServer(
    {
      noDelay: true,
      // A missing Host is answered by the handler, in the Messages error shape, not by node's bare 400.
      requireHostHeader: false,
      // Headers that trickle in are cut as soon as a stalled body would be (node checks its timeouts
      // every `connectionsCheckingInterval`, so that bounds how late the cut comes).
      ...(bodyIdleTimeoutMs > 0
        ? {
            headersTimeout: Math.min(NODE_HEADERS_TIMEOUT_MS, bodyIdleTimeoutMs),
            connectionsCheckingInterval: Math.min(
              NODE_CHECK_INTERVAL_MS,
              Math.max(100, Math.ceil(bodyIdleTimeoutMs / 4)),
            ),
          }
        : {}),
    },
    createNodeListener(handler, {
      maxRequestBytes: options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
      bodyIdleTimeoutMs,
      pingIntervalMs,
      isClosing: () => isClosing,
      onExchangeStart: (cancellation) => inFlight.add(cancellation),
      onExchangeEnd: (cancellation) => {
        inFlight.delete(cancellation);
        if (isClosing) {
          // A connection whose exchange just ended is idle now: close it instead of keeping it alive.
          server.closeIdleConnections();
          if (inFlight.size === 0) onIdle?.();
        }
      },
    }),
  );

  // What node's parser refuses is answered in the Messages error shape, not as a bare 400.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) =>
    answerClientError(error, socket, responseStartedOn(socket)),
  );

  await listen(server, options.port ?? DEFAULT_PORT, host);
  const address = server.address() as AddressInfo;
  const urlHost = isIP(host) === 6 ? `[${host}]` : host;
  const url = `http://${urlHost}:${address.port}`;
  own.url = url;
  const upstreamUrl = options.transport.upstreamPolicy?.baseUrl;
  if (upstreamUrl !== undefined && pointsAtListener(upstreamUrl, host, address.port)) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const variable = options.transport.provider === 'anthropic' ? 'ANTHROPIC_BASE_URL' : 'TPX_BASE_URL';
    throw new TransportError(
      'MODEL_ECONFIG',
      `${variable} (${upstreamUrl}) is this proxy's own address: it would forward every request to itself. ` +
        `Unset it in this shell (it was probably exported for a client: unset ANTHROPIC_BASE_URL ANTHROPIC_API_KEY), ` +
        'or point it at the real upstream',
    );
  }
  logger.info(
    {
      url,
      provider: options.transport.selection.provider,
      reason: options.transport.selection.reason,
      inboundAuth: proxyToken === undefined ? 'none' : 'proxy token',
    },
    'listening',
  );

  async function shutdown(): Promise<void> {
    isDraining = true;
    const drainDelayMs = options.drainDelayMs ?? 0;
    if (drainDelayMs > 0) {
      logger.info({ drainDelayMs }, 'draining: /readyz answers 503, still accepting connections');
      await new Promise((resolve) => setTimeout(resolve, drainDelayMs));
    }
    isClosing = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    if (inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        onIdle = resolve;
        timer = setTimeout(resolve, shutdownGraceMs);
      });
      clearTimeout(timer);
    }
    if (inFlight.size > 0) {
      logger.warn(
        { inFlight: inFlight.size, shutdownGraceMs },
        'shutdown grace period over: cancelling exchanges in flight',
      );
      for (const cancellation of inFlight) {
        cancellation.abort(new TransportError('MODEL_EABORTED', 'the proxy is shutting down'));
      }
    }
    server.closeAllConnections();
    await closed;
    logger.info({ url }, 'closed');
  }

  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    close() {
      closing ??= shutdown();
      return closing;
    },
  };
}
