/**
 * The official SDK (its default retries on) against `tpx serve`, over upstreams that fail: the proxy's
 * retries and the client's do not multiply, an upstream answer over the size limit is blamed on the
 * upstream, and a request whose tool ids would collide upstream is refused before anything is sent.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { TransportError } from '../../src/errors.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport, TransportOptions } from '../../src/transport/types.js';
import {
  anthropicSse,
  helloRequest,
  startScriptedServer,
  step,
  textStreamEvents,
  type ScriptedServer,
  type Step,
} from '../helpers/scripted-server.js';
import { captureLogs } from './serve-support.js';

type Upstream = 'anthropic' | 'tpx';

let upstream: ScriptedServer | undefined;
let transport: ModelTransport | undefined;
let server: RunningServer | undefined;

afterEach(async () => {
  await server?.close();
  await transport?.close();
  await upstream?.close();
  server = undefined;
  transport = undefined;
  upstream = undefined;
});

/** A proxy on `kind`'s path in front of a scripted upstream; the proxy's own waits are instant. */
async function startProxy(
  kind: Upstream,
  script: readonly Step[] | (() => Step),
  options: TransportOptions = {},
): Promise<{ upstream: ScriptedServer; url: string }> {
  upstream = await startScriptedServer(script);
  const credentials =
    kind === 'anthropic'
      ? { anthropicApiKey: 'sk-ant-layering-upstream', anthropicBaseUrl: upstream.url }
      : { tpxToken: 'tpx-layering-upstream-token', tpxBaseUrl: `${upstream.url}/v1` };
  transport = createTransport({ env: {}, ...credentials, sleep: async () => undefined, ...options });
  server = await startServer({ transport, port: 0, logger: captureLogs().logger });
  return { upstream, url: server.url };
}

/** The official SDK with its defaults (two retries of its own), as a user would make it. */
function defaultClient(url: string): Anthropic {
  return new Anthropic({ baseURL: url, apiKey: 'sk-ant-client-side' });
}

const HELLO = {
  model: 'claude-test',
  max_tokens: 64,
  messages: [{ role: 'user' as const, content: 'Hello' }],
};

/** What each upstream answers in a storm: overloaded, with the upstream's own "do retry" hint. */
function storm(kind: Upstream, status: 429 | 503 | 529): () => Step {
  const body =
    kind === 'anthropic'
      ? {
          type: 'error',
          error: { type: status === 429 ? 'rate_limit_error' : 'overloaded_error', message: 'Overloaded' },
        }
      : {
          error: { message: 'Rate limit reached, slow down', type: 'requests', code: 'rate_limit_exceeded' },
        };
  return () => step.json(body, { status, headers: { 'x-should-retry': 'true' } });
}

async function failure(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Anthropic.APIError);
  return error as InstanceType<typeof Anthropic.APIError>;
}

describe('retries of the proxy and of its client do not multiply', () => {
  it.each([
    ['anthropic', 529],
    ['anthropic', 429],
    ['tpx', 503],
    ['tpx', 429],
  ] as const)(
    'a %s upstream answering %i to everything sees only the proxy attempts of one SDK call',
    async (kind, status) => {
      const proxy = await startProxy(kind, storm(kind, status));
      const error = await failure(defaultClient(proxy.url).messages.create(HELLO));
      expect(error.status).toBe(kind === 'tpx' && status === 503 ? 529 : status);
      expect(error.headers?.get('x-should-retry')).toBe('false');
      // The proxy's default: two retries, three attempts. The SDK's two retries add none.
      expect(proxy.upstream.requests).toHaveLength(3);
    },
  );

  it('a streamed SDK call that fails before its first event sees only the proxy attempts too', async () => {
    const proxy = await startProxy('anthropic', storm('anthropic', 529));
    const error = await failure(
      (async () => {
        const stream = await defaultClient(proxy.url).messages.create({ ...HELLO, stream: true });
        for await (const _event of stream) break;
      })(),
    );
    expect(error.status).toBe(529);
    expect(proxy.upstream.requests).toHaveLength(3);
  });

  it('counts one proxy attempt per SDK attempt when the proxy retries are turned off', async () => {
    const proxy = await startProxy('anthropic', storm('anthropic', 529), { maxRetries: 0 });
    const client = new Anthropic({ baseURL: proxy.url, apiKey: 'sk-ant-client-side', maxRetries: 1 });
    const error = await failure(client.messages.create(HELLO));
    expect(error.status).toBe(529);
    // The upstream's own "retry" hint goes through: retrying is the client's job here.
    expect(error.headers?.get('x-should-retry')).toBe('true');
    expect(proxy.upstream.requests).toHaveLength(2);
  });

  it('says x-should-retry: false when the retry-after asked for runs past the total deadline', async () => {
    const proxy = await startProxy(
      'anthropic',
      () =>
        step.json(
          { type: 'error', error: { type: 'rate_limit_error', message: 'limited' } },
          { status: 429, headers: { 'retry-after': '3600' } },
        ),
      { timeoutMs: 60_000 },
    );
    const error = await failure(defaultClient(proxy.url).messages.create(HELLO));
    expect(error.status).toBe(429);
    expect(error.headers?.get('retry-after')).toBe('3600');
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(proxy.upstream.requests).toHaveLength(1);
  });

  it('leaves a non-retryable failure without a retry hint of its own', async () => {
    const proxy = await startProxy('anthropic', () =>
      step.json({ type: 'error', error: { type: 'invalid_request_error', message: 'no' } }, { status: 400 }),
    );
    const error = await failure(defaultClient(proxy.url).messages.create(HELLO));
    expect(error.status).toBe(400);
    expect(error.headers?.get('x-should-retry')).toBeNull();
    expect(proxy.upstream.requests).toHaveLength(1);
  });
});

describe('an upstream answer over the size limit', () => {
  const LIMIT = 64 * 1024;

  it.each(['anthropic', 'tpx'] as const)(
    'reaches the client of a %s proxy as a 502 api_error, not a 413 about its request',
    async (kind) => {
      const proxy = await startProxy(kind, () => step.oversize(512 * 1024), {
        maxResponseBytes: LIMIT,
        maxRetries: 0,
      });
      const client = new Anthropic({ baseURL: proxy.url, apiKey: 'sk-ant-client-side', maxRetries: 0 });
      const error = await failure(client.messages.create(HELLO));
      expect(error.status).toBe(502);
      expect(error.error).toMatchObject({ type: 'error', error: { type: 'api_error' } });
      expect(error.message).toMatch(/response is larger than the limit of 65536 bytes/);
    },
  );

  it('answers a declared content-length over the limit with a 502 too', async () => {
    const proxy = await startProxy(
      'anthropic',
      () => step.oversize(8 * 1024 * 1024, { declareLength: true }),
      {
        maxResponseBytes: LIMIT,
        maxRetries: 0,
      },
    );
    const response = await fetch(`${proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(HELLO),
    });
    expect(response.status).toBe(502);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe('api_error');
  });

  it('ends a stream that grows past the limit with an api_error event', async () => {
    const [start, blockStart] = textStreamEvents();
    const deltas = Array.from({ length: 64 }, () => ({
      type: 'content_block_delta' as const,
      index: 0,
      delta: { type: 'text_delta' as const, text: 'y'.repeat(4_000) },
    }));
    const proxy = await startProxy(
      'anthropic',
      [step.sse(anthropicSse([start!, blockStart!, ...deltas]), { frameDelayMs: 1 })],
      { maxResponseBytes: LIMIT, maxRetries: 0 },
    );
    const client = new Anthropic({ baseURL: proxy.url, apiKey: 'sk-ant-client-side', maxRetries: 0 });
    const error = await failure(
      (async () => {
        const stream = await client.messages.create({ ...HELLO, stream: true });
        for await (const _event of stream) {
          // read to the end
        }
      })(),
    );
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });

  it('is MODEL_ETOOBIG with status 502 for a library caller', async () => {
    await startProxy('tpx', () => step.oversize(512 * 1024), { maxResponseBytes: LIMIT, maxRetries: 0 });
    const error = await transport!.send(helloRequest()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransportError);
    expect([
      (error as TransportError).code,
      (error as TransportError).status,
      (error as TransportError).body.error.type,
    ]).toEqual(['MODEL_ETOOBIG', 502, 'api_error']);
  });
});

/** Two tool calls the caller says the model made, and their results. */
function twoToolCalls(firstId: string, secondId: string) {
  return {
    model: 'claude-test',
    max_tokens: 64,
    tools: [{ name: 'read', input_schema: { type: 'object' as const } }],
    messages: [
      { role: 'user' as const, content: 'Read both files' },
      {
        role: 'assistant' as const,
        content: [
          { type: 'tool_use' as const, id: firstId, name: 'read', input: { path: 'a' } },
          { type: 'tool_use' as const, id: secondId, name: 'read', input: { path: 'b' } },
        ],
      },
      {
        role: 'user' as const,
        content: [
          { type: 'tool_result' as const, tool_use_id: firstId, content: 'A' },
          { type: 'tool_result' as const, tool_use_id: secondId, content: 'B' },
        ],
      },
    ],
  };
}

/**
 * Ids a caller made up to collide: a repeat's id (`tpx_d2…`, its own wire id) or a generated one
 * (`tpx_g…`) beside the encoded form of that very string, which decodes to it too.
 */
const COLLIDING_IDS = [
  ['tpx_d2eY2FsbF9hYmM', 'tpx_edHB4X2QyZVkyRnNiRjloWW1N'],
  ['tpx_ggen1', 'tpx_edHB4X2dnZW4x'],
] as const;

describe('caller tool ids that would reach the upstream as one id', () => {
  it.each(COLLIDING_IDS)(
    'refuses %s beside %s with MODEL_EINVAL before sending anything (library, both wires)',
    async (firstId, secondId) => {
      for (const wire of ['chat', 'responses'] as const) {
        await startProxy('tpx', [], { tpxWire: wire });
        const error = await transport!
          .send(twoToolCalls(firstId, secondId))
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(TransportError);
        expect((error as TransportError).code).toBe('MODEL_EINVAL');
        expect((error as TransportError).message).toContain(firstId);
        expect((error as TransportError).message).toContain(secondId);
        expect(upstream!.requests).toHaveLength(0);
        await server!.close();
        await transport!.close();
        await upstream!.close();
        server = undefined;
      }
    },
  );

  it('answers the proxy client 400 invalid_request_error, for a message and for a stream', async () => {
    const proxy = await startProxy('tpx', []);
    const client = new Anthropic({ baseURL: proxy.url, apiKey: 'sk-ant-client-side', maxRetries: 0 });
    const request = twoToolCalls(...COLLIDING_IDS[0]);
    const sent = await failure(client.messages.create(request));
    expect(sent.status).toBe(400);
    expect(sent.error).toMatchObject({ error: { type: 'invalid_request_error' } });
    const streamed = await failure(client.messages.create({ ...request, stream: true }));
    expect(streamed.status).toBe(400);
    expect(proxy.upstream.requests).toHaveLength(0);
  });

  it('sends a repeated upstream id back under the id the caller was shown, and the same id used by a call and its result', async () => {
    const proxy = await startProxy('tpx', [
      step.json({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
      }),
    ]);
    await transport!.send(twoToolCalls('call_abc', 'tpx_d2eY2FsbF9hYmM'));
    const sent = proxy.upstream.requests[0]!.json as { messages: { tool_calls?: { id: string }[] }[] };
    expect(sent.messages[1]!.tool_calls!.map((call) => call.id)).toEqual(['call_abc', 'tpx_d2eY2FsbF9hYmM']);
  });
});
