/**
 * The routes an operator's tooling calls: `/readyz` and `/metrics` in front of the Messages handler,
 * the metrics port of its own, and the worker side of metrics gathered by the primary process.
 */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startMetricsServer, type RunningMetricsServer } from '../../src/server/metrics-server.js';
import { withOperationalRoutes, type MetricsSource } from '../../src/server/operational-routes.js';
import type { InboundRequest, JsonResponse, ProxyResponse } from '../../src/server/types.js';
import { parseWorkerCount } from '../../src/server/workers.js';

function inbound(method: string, url: string, headers: Record<string, string> = {}): InboundRequest {
  return {
    method,
    url,
    headers,
    readBody: () => Promise.resolve(new Uint8Array()),
    signal: new AbortController().signal,
  };
}

const PASSED: JsonResponse = { kind: 'json', status: 299, headers: {}, body: 'handler' };

function routes(options: { ready?: boolean; metrics?: MetricsSource; proxyToken?: string } = {}) {
  const seen: string[] = [];
  const handler = withOperationalRoutes(
    (request) => {
      seen.push(`${request.method} ${request.url}`);
      return Promise.resolve(PASSED);
    },
    { isReady: () => options.ready ?? true, metrics: options.metrics, proxyToken: options.proxyToken },
  );
  return { handler, seen };
}

const METRICS: MetricsSource = {
  contentType: 'text/plain; version=0.0.4',
  render: () => Promise.resolve('up 1\n'),
};

describe('/readyz', () => {
  it('answers 200 ready, or 503 while draining, for GET and HEAD, with or without a query', async () => {
    const ready = routes();
    const draining = routes({ ready: false });
    expect(await ready.handler(inbound('GET', '/readyz'))).toStrictEqual({
      kind: 'json',
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      body: '{"ready":true}',
    });
    expect(await draining.handler(inbound('HEAD', '/readyz?verbose'))).toStrictEqual({
      kind: 'json',
      status: 503,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      body: '{"ready":false,"reason":"draining: finishing the exchanges in flight"}',
    });
    expect(ready.seen).toStrictEqual([]);
  });

  it('hands every other method and path to the Messages handler', async () => {
    const { handler, seen } = routes({ metrics: METRICS });
    for (const [method, url] of [
      ['POST', '/readyz'],
      ['GET', '/readyzz'],
      ['GET', '/readyz/x'],
      ['POST', '/metrics'],
      ['GET', '/metricsx'],
      ['GET', '/v1/messages'],
    ] as const) {
      expect(await handler(inbound(method, url))).toBe(PASSED);
    }
    expect(seen).toHaveLength(6);
  });
});

describe('/metrics on the proxy port', () => {
  it('renders the source for GET and HEAD, with or without a query', async () => {
    const { handler } = routes({ metrics: METRICS });
    const expected = {
      kind: 'json',
      status: 200,
      headers: { 'content-type': 'text/plain; version=0.0.4', 'cache-control': 'no-store' },
      body: 'up 1\n',
    };
    expect(await handler(inbound('GET', '/metrics'))).toStrictEqual(expected);
    expect(await handler(inbound('HEAD', '/metrics?name[]=up'))).toStrictEqual(expected);
  });

  it('is the handler’s (a 404) when no metrics source is set', async () => {
    const { handler, seen } = routes();
    await handler(inbound('GET', '/metrics'));
    expect(seen).toStrictEqual(['GET /metrics']);
  });

  it('needs the proxy token when one is set, and says how to present it', async () => {
    const { handler } = routes({ metrics: METRICS, proxyToken: 'proxy-token-1' });
    const denied = (await handler(inbound('GET', '/metrics'))) as JsonResponse;
    expect(denied.status).toBe(401);
    expect(denied.headers['content-type']).toBe('application/json');
    expect(denied.headers['request-id']).toMatch(/^req_/);
    expect(JSON.parse(denied.body).error).toStrictEqual({
      type: 'authentication_error',
      message:
        'this proxy requires its token for /metrics: send it as Authorization: Bearer <token> (Prometheus: authorization.credentials), or serve metrics on their own port with --metrics-port',
    });
    const allowed = await handler(inbound('GET', '/metrics', { authorization: 'Bearer proxy-token-1' }));
    expect((allowed as JsonResponse).status).toBe(200);
  });

  it('answers 503 with the reason when the source fails', async () => {
    const failing = (reason: unknown): MetricsSource => ({
      contentType: 'x',
      // A source may reject with anything; a non-Error reason is shown as text.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      render: () => Promise.reject(reason),
    });
    const byError = await routes({ metrics: failing(new Error('registry busy')) }).handler(
      inbound('GET', '/metrics'),
    );
    expect(byError).toStrictEqual({
      kind: 'json',
      status: 503,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
      body: 'metrics are not available right now: registry busy\n',
    });
    const byText = (await routes({ metrics: failing('plain reason') }).handler(
      inbound('GET', '/metrics'),
    )) as ProxyResponse & { body: string };
    expect(byText.body).toBe('metrics are not available right now: plain reason\n');
  });
});

function fetchText(
  url: string,
  method = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('the metrics port of its own', () => {
  let server: RunningMetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('serves only /metrics, for GET and HEAD, and says so otherwise', async () => {
    server = await startMetricsServer({ host: '127.0.0.1', port: 0, source: METRICS });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const metrics = await fetchText(`${server.url}/metrics?x=1`);
    expect([
      metrics.status,
      metrics.headers['content-type'],
      metrics.headers['cache-control'],
      metrics.body,
    ]).toStrictEqual([200, 'text/plain; version=0.0.4', 'no-store', 'up 1\n']);
    expect((await fetchText(`${server.url}/metrics`, 'HEAD')).status).toBe(200);
    const other = await fetchText(`${server.url}/healthz`);
    expect([other.status, other.headers['content-type'], other.body]).toStrictEqual([
      404,
      'text/plain; charset=utf-8',
      'only /metrics is served here\n',
    ]);
    const posted = await fetchText(`${server.url}/metrics`, 'POST');
    expect([posted.status, posted.headers['allow'], posted.body]).toStrictEqual([405, 'GET', '']);
  });

  it('answers 503 with the reason when the source fails', async () => {
    server = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      source: { contentType: 'x', render: () => Promise.reject(new Error('no registry')) },
    });
    const answer = await fetchText(`${server.url}/metrics`);
    expect([answer.status, answer.headers['content-type'], answer.body]).toStrictEqual([
      503,
      'text/plain; charset=utf-8',
      'metrics are not available right now: no registry\n',
    ]);
    await server.close();
    server = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      source: { contentType: 'x', render: () => Promise.reject('text reason') },
    });
    expect((await fetchText(`${server.url}/metrics`)).body).toBe(
      'metrics are not available right now: text reason\n',
    );
  });

  it('names an IPv6 host in brackets and refuses a port in use', async () => {
    server = await startMetricsServer({ host: '127.0.0.1', port: 0, source: METRICS });
    const error = await startMetricsServer({ host: '127.0.0.1', port: server.port, source: METRICS }).catch(
      (thrown: unknown) => thrown as { code: string; message: string },
    );
    expect([(error as { code: string }).code, (error as { message: string }).message]).toStrictEqual([
      'MODEL_ECONFIG',
      `cannot listen for metrics on 127.0.0.1:${server.port}: EADDRINUSE`,
    ]);
    const v6 = await startMetricsServer({ host: '::1', port: 0, source: METRICS }).catch(() => undefined);
    // A machine without IPv6 loopback cannot bind it.
    if (v6 !== undefined) {
      expect(v6.url).toBe(`http://[::1]:${v6.port}`);
      await v6.close();
    }
  });
});

describe('parseWorkerCount', () => {
  it('reads a whole number from 1 to 1024, or auto as one per core and at least one', () => {
    expect(parseWorkerCount('1')).toBe(1);
    expect(parseWorkerCount('1024')).toBe(1024);
    expect(parseWorkerCount('auto', () => 0)).toBe(1);
    expect(parseWorkerCount('auto', () => 3)).toBe(3);
    expect(parseWorkerCount('auto')).toBeGreaterThanOrEqual(1);
  });

  it.each(['0', '1025', '-1', '1.5', ' 2', '2 ', '', 'two', '1e2', '0x10', '99999999999999999999'])(
    'refuses %j with MODEL_ECONFIG naming it',
    (value) => {
      let thrown: unknown;
      try {
        parseWorkerCount(value);
      } catch (error) {
        thrown = error;
      }
      expect([(thrown as { code?: string }).code, (thrown as Error).message]).toStrictEqual([
        'MODEL_ECONFIG',
        `--workers must be a whole number from 1 to 1024, or auto (one per core), got ${value}`,
      ]);
    },
  );
});

describe('HEAD on the metrics port', () => {
  it('is not refused as a wrong method', async () => {
    const render = vi.fn(() => Promise.resolve('up 1\n'));
    const server = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      source: { contentType: 'x', render },
    });
    try {
      expect((await fetchText(`${server.url}/metrics`, 'HEAD')).status).toBe(200);
      expect(render).toHaveBeenCalledTimes(1);
    } finally {
      await server.close();
    }
  });
});
