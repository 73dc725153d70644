/**
 * `startMetricsServer`: `GET /metrics` on a port of its own (`tpx serve --metrics-port`), for a
 * Prometheus that scrapes without the proxy token. It serves nothing else, so opening it to a
 * monitoring network exposes no model credentials.
 *
 * @module
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TransportError } from '../errors.js';
import type { MetricsSource } from './operational-routes.js';

/** A listening metrics endpoint. */
export interface RunningMetricsServer {
  /** e.g. `http://127.0.0.1:9464` */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the metrics listener on `host:port` and resolves once it listens. */
export async function startMetricsServer(options: {
  host: string;
  port: number;
  source: MetricsSource;
}): Promise<RunningMetricsServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('only /metrics is served here\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET', 'content-type': 'text/plain; charset=utf-8' }).end();
      return;
    }
    options.source.render().then(
      (body) => {
        response.writeHead(200, { 'content-type': options.source.contentType, 'cache-control': 'no-store' });
        response.end(body);
      },
      (error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        response.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(`metrics are not available right now: ${reason}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new TransportError(
          'MODEL_ECONFIG',
          `cannot listen for metrics on ${options.host}:${options.port}: ${error.code ?? error.message}`,
          { cause: error },
        ),
      ),
    );
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
