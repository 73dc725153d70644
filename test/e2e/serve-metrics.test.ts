/**
 * `tpx serve`'s Prometheus metrics and readiness, over loopback: a scrape after real exchanges shows
 * them by route, status, provider and model, with tokens, errors, retries, open streams and the process
 * metrics; `/metrics` needs the proxy token when one is set; client-chosen models cannot grow the scrape
 * without bound; `/readyz` turns 503 while draining and `/healthz` does not.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { createProxyMetrics, MAX_LABEL_VALUES } from '../../src/telemetry/metrics.js';
import { startMetricsServer } from '../../src/server/metrics-server.js';
import { startServer } from '../../src/server/start-server.js';
import { createTransport } from '../../src/transport/create-transport.js';
import { startScriptedServer, step, textMessage, type ScriptedServer } from '../helpers/scripted-server.js';
import { startTpxProxy, type TpxProxy } from './serve-support.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function proxyWithMetrics(proxyToken?: string): Promise<TpxProxy> {
  const metrics = createProxyMetrics({ provider: 'tpx' });
  const source = { contentType: metrics.registry.contentType, render: () => metrics.registry.metrics() };
  const proxy = await startTpxProxy({
    transport: { tpxModel: 'served-model-7b', observer: metrics.transportObserver },
    serve: { telemetry: metrics, metrics: source, ...(proxyToken === undefined ? {} : { proxyToken }) },
  });
  closers.push(() => proxy.close());
  return proxy;
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${url}/metrics`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

/** The value of the sample `name{labels}` in a scrape, or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const matches = Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`));
    if (matches) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('/metrics', () => {
  it('counts exchanges, tokens, errors and streams by route, status, provider and model', async () => {
    const proxy = await proxyWithMetrics();
    const client = new Anthropic({ baseURL: proxy.server.url, apiKey: 'unused', maxRetries: 0 });
    await client.messages.create({
      model: 'team-model-large',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const stream = client.messages.stream({
      model: 'team-model-large',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello again' }],
    });
    await stream.finalMessage();
    const invalid = await fetch(`${proxy.server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'team-model-large', messages: [] }),
    });
    expect(invalid.status).toBe(400);

    const text = await scrape(proxy.server.url);
    const labels = { route: '/v1/messages', provider: 'tpx', model: 'team-model-large' };
    expect(
      sample(text, 'tpx_requests_total', { ...labels, status: '200', upstream_model: 'served-model-7b' }),
    ).toBe(2);
    expect(sample(text, 'tpx_requests_total', { ...labels, status: '400', upstream_model: 'none' })).toBe(1);
    expect(sample(text, 'tpx_errors_total', { provider: 'tpx', code: 'MODEL_EINVAL' })).toBe(1);
    expect(
      sample(text, 'tpx_exchange_duration_seconds_count', { route: '/v1/messages', stream: 'true' }),
    ).toBe(1);
    expect(
      sample(text, 'tpx_exchange_duration_seconds_count', { route: '/v1/messages', stream: 'false' }),
    ).toBe(2);
    expect(
      sample(text, 'tpx_time_to_first_byte_seconds_count', { route: '/v1/messages', stream: 'true' }),
    ).toBe(1);
    expect(sample(text, 'tpx_tokens_total', { model: 'team-model-large', type: 'input' })).toBeGreaterThan(0);
    expect(sample(text, 'tpx_tokens_total', { model: 'team-model-large', type: 'output' })).toBeGreaterThan(
      0,
    );
    expect(sample(text, 'tpx_upstream_attempts_total', { provider: 'tpx', status: '200' })).toBe(2);
    expect(sample(text, 'tpx_open_streams', { provider: 'tpx' })).toBe(0);
    // prom-client's default process metrics.
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('counts retries and the attempts that failed', async () => {
    const upstream: ScriptedServer = await startScriptedServer([
      step.json({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }, { status: 529 }),
      step.json(textMessage()),
    ]);
    closers.push(() => upstream.close());
    const metrics = createProxyMetrics({ provider: 'anthropic', collectProcessMetrics: false });
    const transport = createTransport({
      env: {},
      anthropicApiKey: 'sk-ant-metrics',
      anthropicBaseUrl: upstream.url,
      sleep: () => Promise.resolve(),
    });
    const server = await startServer({
      transport,
      port: 0,
      logger: false,
      telemetry: metrics,
      metrics: { contentType: metrics.registry.contentType, render: () => metrics.registry.metrics() },
    });
    closers.push(async () => {
      await server.close();
      await transport.close();
    });
    const client = new Anthropic({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 });
    await client.messages.create({
      model: 'claude-test',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const text = await scrape(server.url);
    expect(sample(text, 'tpx_upstream_retries_total', { provider: 'anthropic' })).toBe(1);
    expect(sample(text, 'tpx_upstream_attempts_total', { status: '529' })).toBe(1);
    expect(sample(text, 'tpx_upstream_attempts_total', { status: '200' })).toBe(1);
    expect(sample(text, 'tpx_requests_total', { status: '200', upstream_model: 'claude-test' })).toBe(1);
    expect(text).not.toContain('process_cpu_user_seconds_total');
  });

  it('requires the proxy token when one is set', async () => {
    const proxy = await proxyWithMetrics('metrics-proxy-token');
    const refused = await fetch(`${proxy.server.url}/metrics`);
    expect(refused.status).toBe(401);
    const body = (await refused.json()) as { error: { message: string } };
    expect(body.error.message).toContain('--metrics-port');
    const text = await scrape(proxy.server.url, { authorization: 'Bearer metrics-proxy-token' });
    expect(text).toContain('tpx_open_streams');
  });

  it('serves metrics on a port of their own without the token', async () => {
    const metrics = createProxyMetrics({ provider: 'tpx', collectProcessMetrics: false });
    const server = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      source: { contentType: metrics.registry.contentType, render: () => metrics.registry.metrics() },
    });
    closers.push(() => server.close());
    expect(await scrape(server.url)).toContain('tpx_requests_total');
    expect((await fetch(`${server.url}/v1/messages`)).status).toBe(404);
  });

  it('counts models beyond the first hundred as other', async () => {
    const proxy = await proxyWithMetrics();
    for (let index = 0; index < MAX_LABEL_VALUES + 20; index++) {
      // Refused before anything goes upstream (no max_tokens), but counted under the model asked for.
      const response = await fetch(`${proxy.server.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: `model-${index}`, messages: [] }),
      });
      await response.arrayBuffer();
    }
    const text = await scrape(proxy.server.url);
    const models = new Set(
      text
        .split('\n')
        .filter((line) => line.startsWith('tpx_requests_total{'))
        .map((line) => /model="([^"]*)"/.exec(line)?.[1]),
    );
    expect(models.size).toBe(MAX_LABEL_VALUES + 1);
    expect(models.has('other')).toBe(true);
    expect(sample(text, 'tpx_requests_total', { model: 'other' })).toBe(20);
  });
});

describe('/readyz', () => {
  it('answers 503 while draining, while /healthz stays 200 and exchanges are still served', async () => {
    const proxy = await startTpxProxy({ serve: { drainDelayMs: 1_500 } });
    closers.push(() => proxy.close());
    const ready = await fetch(`${proxy.server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true });
    const closing = proxy.server.close();
    const draining = await fetch(`${proxy.server.url}/readyz`);
    expect(draining.status).toBe(503);
    expect(((await draining.json()) as { ready: boolean }).ready).toBe(false);
    expect((await fetch(`${proxy.server.url}/healthz`)).status).toBe(200);
    const client = new Anthropic({ baseURL: proxy.server.url, apiKey: 'unused', maxRetries: 0 });
    const message = await client.messages.create({
      model: 'claude-test',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'still there?' }],
    });
    expect(message.type).toBe('message');
    await closing;
  });
});
