/**
 * Routes through `tpx serve` (in-process) over loopback: several mock-model upstreams, each with its own
 * token, behind one proxy configured with a routes file's content. Each test names the upstream and model
 * that ran from the answer's `x-tpx-upstream` / `x-tpx-model` headers and from what each upstream received.
 */
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import type { MockReply } from '../../src/mock-model/script.js';
import { startServer, type RunningServer, type ServeOptions } from '../../src/server/start-server.js';
import { createProxyMetrics } from '../../src/telemetry/metrics.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { RoutesConfig } from '../../src/transport/routes/routes-config.js';
import type { ModelTransport, TransportOptions } from '../../src/transport/types.js';
import { startScriptedServer, step } from '../helpers/scripted-server.js';
import { captureLogs } from './serve-support.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A mock model requiring its own token `token-<name>`. */
async function upstream(name: string, replies: MockReply[] = []): Promise<MockModelServer> {
  const mock = await startMockModel({ token: `token-${name}`, model: `${name}-model`, script: { replies } });
  closers.push(() => mock.close());
  return mock;
}

/** A loopback URL nothing listens on: every connection to it is refused. */
async function refusingUrl(): Promise<string> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

function upstreamEntry(name: string, url: string, extra: Record<string, unknown> = {}) {
  return { baseUrl: url, token: `token-${name}`, dialect: 'openai-generic' as const, ...extra };
}

async function proxy(
  routes: RoutesConfig,
  options: TransportOptions = {},
  serve: Omit<ServeOptions, 'transport'> = {},
): Promise<{ url: string; transport: ModelTransport; server: RunningServer }> {
  const transport = createTransport({ env: {}, routes, ...options });
  const server = await startServer({ transport, port: 0, logger: captureLogs().logger, ...serve });
  closers.push(async () => {
    await server.close();
    await transport.close();
  });
  return { url: server.url, transport, server };
}

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

async function ask(url: string, request: Record<string, unknown>): Promise<Answer> {
  const response = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }], ...request }),
  });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // A stream: the text is the events.
  }
  return { status: response.status, headers: response.headers, body, text };
}

function chatRequests(mock: MockModelServer) {
  return mock.requests.filter((request) => request.path === '/v1/chat/completions');
}

function sentModels(mock: MockModelServer): string[] {
  return chatRequests(mock).map((request) => (request.body as { model: string }).model);
}

const IMAGE = {
  type: 'image',
  source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
};

describe('routes pick the upstream per exchange', () => {
  it('sends each request to the first route whose conditions hold, with that route’s model', async () => {
    const local = await upstream('local');
    const cloud = await upstream('cloud');
    const { url } = await proxy({
      upstreams: { local: upstreamEntry('local', local.url), cloud: upstreamEntry('cloud', cloud.url) },
      routes: [
        { match: { model: '*haiku*' }, to: 'local:qwen3-4b' },
        { match: { hasImage: true }, to: 'cloud:vision-72b' },
        { match: { thinking: true }, to: 'cloud:reasoner' },
        { match: { inputTokensOver: 2000 }, to: 'cloud:long-context' },
        { to: 'local:qwen3-32b' },
      ],
    });

    const haiku = await ask(url, { model: 'claude-haiku-4-5' });
    expect(haiku.status).toBe(200);
    expect(haiku.headers.get('x-tpx-upstream')).toBe('local');
    expect(haiku.headers.get('x-tpx-model')).toBe('qwen3-4b');
    // The caller hears of the model it asked for.
    expect(haiku.body['model']).toBe('claude-haiku-4-5');

    const image = await ask(url, {
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: [IMAGE, { type: 'text', text: 'What is this?' }] }],
    });
    expect([image.headers.get('x-tpx-upstream'), image.headers.get('x-tpx-model')]).toEqual([
      'cloud',
      'vision-72b',
    ]);

    const thinking = await ask(url, {
      model: 'claude-sonnet-4-5',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(thinking.headers.get('x-tpx-model')).toBe('reasoner');

    const long = await ask(url, {
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'many words here '.repeat(2000) }],
    });
    expect(long.headers.get('x-tpx-model')).toBe('long-context');

    const plain = await ask(url, { model: 'claude-sonnet-4-5' });
    expect([plain.headers.get('x-tpx-upstream'), plain.headers.get('x-tpx-model')]).toEqual([
      'local',
      'qwen3-32b',
    ]);

    expect(sentModels(local)).toEqual(['qwen3-4b', 'qwen3-32b']);
    expect(sentModels(cloud)).toEqual(['vision-72b', 'reasoner', 'long-context']);
    // Each upstream got its own token and never the other's.
    expect(chatRequests(local).every((r) => r.headers['authorization'] === 'Bearer token-local')).toBe(true);
    expect(chatRequests(cloud).every((r) => r.headers['authorization'] === 'Bearer token-cloud')).toBe(true);
  });

  it("applies the target upstream's own model map and output cap", async () => {
    const local = await upstream('local');
    const cloud = await upstream('cloud');
    const { url } = await proxy({
      upstreams: {
        local: upstreamEntry('local', local.url, { modelMap: '*haiku*=small,*=big', maxTokens: 100 }),
        cloud: upstreamEntry('cloud', cloud.url, { maxTokens: 5000 }),
      },
      routes: [{ match: { model: '*opus*' }, to: 'cloud:cloud-big' }, { to: 'local' }],
    });
    const haiku = await ask(url, { model: 'claude-haiku-4-5', max_tokens: 4096 });
    const opus = await ask(url, { model: 'claude-opus-4-1', max_tokens: 4096 });
    expect(haiku.headers.get('x-tpx-model')).toBe('small');
    expect(opus.headers.get('x-tpx-model')).toBe('cloud-big');
    const [localBody] = chatRequests(local).map((r) => r.body as Record<string, unknown>);
    const [cloudBody] = chatRequests(cloud).map((r) => r.body as Record<string, unknown>);
    expect(localBody?.['model']).toBe('small');
    expect(localBody?.['max_tokens'] ?? localBody?.['max_completion_tokens']).toBe(100);
    expect(cloudBody?.['max_tokens'] ?? cloudBody?.['max_completion_tokens']).toBe(4096);
  });
});

describe('fallback happens only before the first byte reaches the caller', () => {
  it('falls back to the next target when the first answers 503, and names the one that answered', async () => {
    const local = await upstream('local', [{ error: { status: 503 } }]);
    const cloud = await upstream('cloud');
    const { url } = await proxy({
      upstreams: { local: upstreamEntry('local', local.url), cloud: upstreamEntry('cloud', cloud.url) },
      routes: [{ to: 'local:small', fallback: ['cloud:big'] }],
    });
    const answer = await ask(url, { model: 'claude-sonnet-4-5' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-tpx-upstream')).toBe('cloud');
    expect(answer.headers.get('x-tpx-model')).toBe('big');
    expect(sentModels(local)).toEqual(['small']);
    expect(sentModels(cloud)).toEqual(['big']);
  });

  it('falls back on 429 and on a refused connection, for streams too', async () => {
    const busy = await upstream('busy', [{ error: { status: 429, headers: { 'retry-after': '30' } } }]);
    const cloud = await upstream('cloud');
    const { url } = await proxy({
      upstreams: {
        down: upstreamEntry('down', await refusingUrl()),
        busy: upstreamEntry('busy', busy.url),
        cloud: upstreamEntry('cloud', cloud.url),
      },
      routes: [{ to: 'down:a', fallback: ['busy:b', 'cloud:c'] }],
    });
    const started = Date.now();
    const answer = await ask(url, { model: 'claude-sonnet-4-5', stream: true });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('event: message_stop');
    expect(answer.text).toContain('"model":"claude-sonnet-4-5"');
    expect(answer.headers.get('x-tpx-upstream')).toBe('cloud');
    // Another upstream is tried at once: the busy one's retry-after is its own.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(sentModels(busy)).toEqual(['b']);
    expect(sentModels(cloud)).toEqual(['c']);
  });

  it('does not fall back after the first byte of a stream reached the caller', async () => {
    const local = await upstream('local', [{ stream_error: { after_chunks: 2 }, text: 'cut short' }]);
    const cloud = await upstream('cloud');
    const { url } = await proxy({
      upstreams: { local: upstreamEntry('local', local.url), cloud: upstreamEntry('cloud', cloud.url) },
      routes: [{ to: 'local:small', fallback: ['cloud:big'] }],
    });
    const answer = await ask(url, { model: 'claude-sonnet-4-5', stream: true });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('event: message_start');
    expect(answer.text).toContain('event: error');
    expect(answer.headers.get('x-tpx-upstream')).toBe('local');
    expect(chatRequests(cloud)).toHaveLength(0);
  });

  it('does not fall back on an error that would be the same anywhere (400)', async () => {
    const local = await upstream('local', [{ error: { status: 400 } }]);
    const cloud = await upstream('cloud');
    const { url } = await proxy({
      upstreams: { local: upstreamEntry('local', local.url), cloud: upstreamEntry('cloud', cloud.url) },
      routes: [{ to: 'local:small', fallback: ['cloud:big'] }],
    });
    const answer = await ask(url, { model: 'claude-sonnet-4-5' });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('x-tpx-upstream')).toBe('local');
    expect(chatRequests(cloud)).toHaveLength(0);
  });

  it('spends one retry budget across retries and fallbacks, then says x-should-retry: false', async () => {
    const first = await upstream('first', [{ error: { status: 503 } }]);
    const second = await upstream('second', [{ error: { status: 503 } }]);
    const third = await upstream('third');
    const { url } = await proxy(
      {
        upstreams: {
          first: upstreamEntry('first', first.url),
          second: upstreamEntry('second', second.url),
          third: upstreamEntry('third', third.url),
        },
        routes: [{ to: 'first:a', fallback: ['second:b', 'third:c'] }],
      },
      { maxRetries: 1 },
    );
    const answer = await ask(url, { model: 'claude-sonnet-4-5' });
    // The upstream's 503 reaches the caller as the Messages overloaded status.
    expect(answer.status).toBe(529);
    expect(answer.headers.get('x-should-retry')).toBe('false');
    expect(answer.headers.get('x-tpx-upstream')).toBe('second');
    expect(chatRequests(third)).toHaveLength(0);
  });
});

describe('a circuit breaker per upstream', () => {
  it('skips an upstream after consecutive failures, then lets one request probe it after the cool-down', async () => {
    const local = await upstream('local', [{ error: { status: 503 } }, { error: { status: 503 } }]);
    const cloud = await upstream('cloud');
    const { url, transport } = await proxy({
      upstreams: { local: upstreamEntry('local', local.url), cloud: upstreamEntry('cloud', cloud.url) },
      routes: [{ to: 'local:small', fallback: ['cloud:big'] }],
      breaker: { failures: 2, coolDownMs: 400 },
    });
    for (let index = 0; index < 3; index++) {
      const answer = await ask(url, { model: 'claude-sonnet-4-5' });
      expect(answer.headers.get('x-tpx-upstream')).toBe('cloud');
    }
    // The third request went straight to the fallback: the breaker had opened after two failures.
    expect(chatRequests(local)).toHaveLength(2);
    expect(transport.upstreamStates?.().find((state) => state.name === 'local')?.state).toBe('open');
    // The live view names each exchange's upstream and shows each breaker as it stands.
    const live = (await (await fetch(`${url}/tpx/exchanges`)).json()) as {
      upstreams: { name: string; breaker: string | null }[];
      exchanges: { upstream: string }[];
    };
    expect(live.upstreams.map(({ name, breaker }) => [name, breaker])).toEqual([
      ['local', 'open'],
      ['cloud', 'closed'],
    ]);
    expect(live.exchanges.map((exchange) => exchange.upstream)).toEqual(['cloud', 'cloud', 'cloud']);

    await new Promise((resolve) => setTimeout(resolve, 450));
    const probe = await ask(url, { model: 'claude-sonnet-4-5' });
    expect(probe.headers.get('x-tpx-upstream')).toBe('local');
    expect(transport.upstreamStates?.().find((state) => state.name === 'local')?.state).toBe('closed');
  });

  it('answers 503 with retry-after when every upstream of the route is cooling down', async () => {
    const { url } = await proxy(
      {
        upstreams: { down: upstreamEntry('down', await refusingUrl()) },
        routes: [{ to: 'down:a' }],
        breaker: { failures: 1, coolDownMs: 60_000 },
      },
      { maxRetries: 0 },
    );
    const first = await ask(url, { model: 'claude-sonnet-4-5' });
    expect(first.status).toBe(502);
    const skipped = await ask(url, { model: 'claude-sonnet-4-5' });
    expect(skipped.status).toBe(503);
    expect(skipped.headers.get('retry-after')).toBe('60');
    expect(JSON.stringify(skipped.body)).toContain('cooling down');
  });
});

describe('what ran is visible to operators', () => {
  it('counts attempts per upstream, shows each breaker in metrics and in /readyz', async () => {
    const local = await upstream('local', [{ error: { status: 503 } }]);
    const cloud = await upstream('cloud');
    const metrics = createProxyMetrics({ provider: 'tpx', collectProcessMetrics: false });
    const { url, transport } = await proxy(
      {
        upstreams: { local: upstreamEntry('local', local.url), cloud: upstreamEntry('cloud', cloud.url) },
        routes: [{ to: 'local:small', fallback: ['cloud:big'] }],
        breaker: { failures: 1, coolDownMs: 60_000 },
      },
      {},
      {
        telemetry: metrics,
        metrics: { contentType: metrics.registry.contentType, render: () => metrics.registry.metrics() },
      },
    );
    metrics.watchUpstreams(() => transport.upstreamStates!());
    expect((await ask(url, { model: 'claude-sonnet-4-5' })).headers.get('x-tpx-upstream')).toBe('cloud');

    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toContain('tpx_upstream_attempts_total{provider="tpx",status="503",upstream="local"} 1');
    expect(text).toContain('tpx_upstream_attempts_total{provider="tpx",status="200",upstream="cloud"} 1');
    expect(text).toContain('tpx_upstream_breaker_state{upstream="local",state="open"} 1');
    expect(text).toContain('tpx_upstream_breaker_state{upstream="cloud",state="closed"} 1');

    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { ready: boolean; upstreams: { name: string; state: string }[] };
    expect(body.ready).toBe(true);
    expect(body.upstreams.map(({ name, state }) => [name, state])).toEqual([
      ['local', 'open'],
      ['cloud', 'closed'],
    ]);
  });
});

describe('conversations that cross upstreams', () => {
  it('never sends one upstream the encrypted reasoning another made, and restores it for its maker', async () => {
    const reasoning = {
      type: 'reasoning',
      id: 'rs_a',
      summary: [{ type: 'summary_text', text: 'Use the tool.' }],
      encrypted_content: 'gAAAA-made-by-a',
    };
    const call = {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_9',
      name: 'get_weather',
      arguments: '{}',
    };
    const done = (id: string) =>
      step.json({
        id,
        object: 'response',
        status: 'completed',
        output: [{ type: 'message', content: [{ type: 'output_text', text: 'Cold.' }] }],
      });
    const a = await startScriptedServer([
      step.json({ id: 'resp_1', object: 'response', status: 'completed', output: [reasoning, call] }),
      done('resp_3'),
    ]);
    const b = await startScriptedServer([done('resp_2')]);
    closers.push(
      () => a.close(),
      () => b.close(),
    );
    const responses = (url: string, name: string) => ({
      ...upstreamEntry(name, `${url}/v1`),
      wire: 'responses' as const,
    });
    const { url } = await proxy({
      upstreams: { a: responses(a.url, 'a'), b: responses(b.url, 'b') },
      routes: [{ match: { model: '*haiku*' }, to: 'a:model-a' }, { to: 'b:model-b' }],
    });
    const tools = [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }];
    const first = await ask(url, {
      model: 'claude-haiku-4-5',
      tools,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      max_tokens: 2048,
    });
    const content = first.body['content'] as { type: string; signature?: string }[];
    expect(content[0]?.signature).toMatch(/^tpxu1\.a\.tpxr1\./);
    const conversation = [
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_9', content: '-3 C' }] },
    ];

    const second = await ask(url, { model: 'claude-sonnet-4-5', tools, messages: conversation });
    expect(second.status).toBe(200);
    expect(second.headers.get('x-tpx-upstream')).toBe('b');
    expect(b.requests[0]!.bodyText).not.toContain('gAAAA-made-by-a');
    // The tool call and its result stay paired on the other upstream.
    expect((b.requests[0]!.json as { input: { type: string; call_id?: string }[] }).input).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'function_call', call_id: 'call_9' }),
        expect.objectContaining({ type: 'function_call_output', call_id: 'call_9' }),
      ]),
    );

    const third = await ask(url, { model: 'claude-haiku-4-5', tools, messages: conversation });
    expect(third.headers.get('x-tpx-upstream')).toBe('a');
    expect((a.requests[1]!.json as { input: unknown[] }).input).toContainEqual(
      expect.objectContaining({ type: 'reasoning', id: 'rs_a', encrypted_content: 'gAAAA-made-by-a' }),
    );
  });
});
