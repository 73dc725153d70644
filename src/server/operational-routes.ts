/**
 * The routes an operator's tools call, in front of the Messages handler:
 *
 * | route | answer |
 * |-------|--------|
 * | `GET /readyz` | `200 {"ready":true}`, or `503 {"ready":false,…}` once the proxy is draining (no token needed); with routes, each upstream's breaker too (`"upstreams":[{"name":"local","state":"closed",…}]`) |
 * | `GET /metrics` | the Prometheus text exposition, when metrics are served on this port; needs the proxy token when one is set |
 *
 * `/healthz` (liveness) stays the Messages handler's: it answers 200 for as long as the process serves,
 * draining or not, so an orchestrator does not kill a process that is finishing its exchanges.
 *
 * @module
 */
import { createProxyAuth } from './auth.js';
import { errorResponse, proxyError } from './error-response.js';
import { generateRequestId } from './exchange.js';
import type { InboundRequest, JsonResponse, ProxyHandler, ProxyResponse } from './types.js';

/** Where a metrics scrape comes from: one registry, or every worker's aggregated. */
export interface MetricsSource {
  /** The exposition's content type (Prometheus text format). */
  readonly contentType: string;
  /** The current metrics as Prometheus text. */
  render(): Promise<string>;
}

/** Options of {@link withOperationalRoutes}. */
export interface OperationalRoutesOptions {
  /** False once the proxy is draining. */
  isReady: () => boolean;
  /** Serve `/metrics` from this source; without one, `/metrics` is the Messages handler's 404. */
  metrics?: MetricsSource | undefined;
  /** When set, `/metrics` requires it (as the Messages routes do). */
  proxyToken?: string | undefined;
  /**
   * More for `/readyz` to tell (each upstream's breaker, with routes). An open breaker does not make the
   * proxy unready: it still answers, and the next probe needs requests to reach it.
   */
  readyDetail?: (() => Record<string, unknown>) | undefined;
}

function plain(status: number, contentType: string, body: string): JsonResponse {
  return {
    kind: 'json',
    status,
    headers: { 'content-type': contentType, 'cache-control': 'no-store' },
    body,
  };
}

const READY = JSON.stringify({ ready: true });
const DRAINING = JSON.stringify({ ready: false, reason: 'draining: finishing the exchanges in flight' });

/** `handler` with `/readyz` and `/metrics` in front of it. */
export function withOperationalRoutes(
  handler: ProxyHandler,
  options: OperationalRoutesOptions,
): ProxyHandler {
  const isAuthorised = createProxyAuth(options.proxyToken);
  const { metrics } = options;
  return async (request: InboundRequest): Promise<ProxyResponse> => {
    const { url, method } = request;
    const isRead = method === 'GET' || method === 'HEAD';
    if (isRead && (url === '/readyz' || url.startsWith('/readyz?'))) {
      const ready = options.isReady();
      const detail = options.readyDetail?.();
      if (detail === undefined) {
        return ready ? plain(200, 'application/json', READY) : plain(503, 'application/json', DRAINING);
      }
      const body = { ...JSON.parse(ready ? READY : DRAINING), ...detail } as Record<string, unknown>;
      return plain(ready ? 200 : 503, 'application/json', JSON.stringify(body));
    }
    if (metrics !== undefined && isRead && (url === '/metrics' || url.startsWith('/metrics?'))) {
      if (!isAuthorised(request.headers)) {
        return errorResponse(
          proxyError(
            401,
            'this proxy requires its token for /metrics: send it as Authorization: Bearer <token> (Prometheus: authorization.credentials), or serve metrics on their own port with --metrics-port',
          ),
          generateRequestId(),
        );
      }
      try {
        return plain(200, metrics.contentType, await metrics.render());
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        return plain(503, 'text/plain; charset=utf-8', `metrics are not available right now: ${reason}\n`);
      }
    }
    return handler(request);
  };
}
