/**
 * The transport's observer hook over loopback: each upstream attempt is seen once at its start and once
 * at its end (status, error, upstream model), headers it returns reach the upstream without replacing
 * the provider's own, token refreshes are reported, and an observer that throws changes nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createTransport,
  type AttemptEnd,
  type AttemptStart,
  type ExchangeObserver,
  type ModelTransport,
  type TokenRefresh,
} from '../../src/index.js';
import {
  anthropicSse,
  helloRequest,
  openAiSse,
  startScriptedServer,
  step,
  textMessage,
  textStreamEvents,
  type RecordedRequest,
  type ScriptedServer,
  type Step,
} from '../helpers/scripted-server.js';

let server: ScriptedServer;
let tempDir: string;
let answer: (record: RecordedRequest) => Step;
const transports: ModelTransport[] = [];

beforeAll(async () => {
  tempDir = mkdtempSync(join(tmpdir(), 'tpx-observer-'));
  server = await startScriptedServer((record) => answer(record));
});
afterAll(async () => {
  await server.close();
  rmSync(tempDir, { recursive: true, force: true });
});
afterEach(async () => {
  await Promise.all(transports.splice(0).map((transport) => transport.close()));
});

function track(transport: ModelTransport): ModelTransport {
  transports.push(transport);
  return transport;
}

function completion() {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'served-model',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
  };
}

function overloaded(): Step {
  return step.json({ error: { message: 'busy', type: 'server_error' } }, { status: 503 });
}

/** An observer that records every call, returning `headers` from each start. */
function recorder(headers?: Record<string, string>) {
  const starts: AttemptStart[] = [];
  const ends: AttemptEnd[] = [];
  const observer: ExchangeObserver = {
    onAttemptStart(attempt) {
      starts.push(attempt);
      return headers;
    },
    onAttemptEnd(attempt) {
      ends.push(attempt);
    },
  };
  return { starts, ends, observer };
}

describe('attempts', () => {
  it('reports a failed attempt and its retry, each with status, error and the upstream model', async () => {
    const transport = track(
      createTransport({
        env: {},
        tpxToken: 'observer-token',
        tpxBaseUrl: `${server.url}/v1`,
        tpxModel: 'upstream-model-x',
        sleep: () => Promise.resolve(),
      }),
    );
    let calls = 0;
    answer = () => (++calls === 1 ? overloaded() : step.json(completion()));
    const { starts, ends, observer } = recorder();
    await transport.send(helloRequest(), { observer });
    expect(starts).toEqual([
      { number: 1, provider: 'tpx' },
      { number: 2, provider: 'tpx' },
    ]);
    expect(
      ends.map(({ number, status, error, upstreamModel }) => [number, status, error?.code, upstreamModel]),
    ).toEqual([
      [1, 503, 'MODEL_EHTTP', 'upstream-model-x'],
      [2, 200, undefined, 'upstream-model-x'],
    ]);
    expect(ends.every((end) => end.durationMs >= 0)).toBe(true);
  });

  it('ends a streamed attempt once, after its last event', async () => {
    const transport = track(
      createTransport({ env: {}, anthropicApiKey: 'sk-ant-observer', anthropicBaseUrl: server.url }),
    );
    answer = () => step.sse(anthropicSse(textStreamEvents()));
    const { ends, observer } = recorder();
    const seen: string[] = [];
    for await (const event of transport.stream(helloRequest({ stream: true }), { observer })) {
      seen.push(event.type);
      // Not ended while events are still being delivered.
      if (event.type !== 'message_stop') expect(ends).toEqual([]);
    }
    expect(seen.at(-1)).toBe('message_stop');
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ number: 1, status: 200, upstreamModel: 'claude-test' });
    expect(ends[0]!.error).toBeUndefined();
  });

  it('ends a stream the consumer left early as aborted', async () => {
    const transport = track(
      createTransport({ env: {}, tpxToken: 'observer-token', tpxBaseUrl: `${server.url}/v1` }),
    );
    const chunk = (content: string) => ({
      id: 'c1',
      object: 'chat.completion.chunk',
      model: 'm',
      choices: [{ index: 0, delta: { content }, finish_reason: null }],
    });
    answer = () =>
      step.sse(openAiSse([chunk('a'), chunk('b'), chunk('c')], { done: false }), { then: 'hang' });
    const { ends, observer } = recorder();
    for await (const event of transport.stream(helloRequest({ stream: true }), { observer })) {
      if (event.type === 'content_block_delta') break;
    }
    expect(ends).toHaveLength(1);
    expect(ends[0]!.error?.code).toBe('MODEL_EABORTED');
  });

  it('adds the headers an observer returns, without replacing the provider’s own', async () => {
    const transport = track(
      createTransport({ env: {}, anthropicApiKey: 'sk-ant-observer', anthropicBaseUrl: server.url }),
    );
    answer = () => step.json(textMessage());
    const before = server.requests.length;
    const { observer } = recorder({
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'x-api-key': 'forged-by-observer',
    });
    await transport.send(helloRequest(), { observer });
    const sent = server.requests[before]!;
    expect(sent.headers['traceparent']).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(sent.headers['x-api-key']).toBe('sk-ant-observer');
  });

  it('keeps an exchange working when its observer throws', async () => {
    const transport = track(
      createTransport({ env: {}, anthropicApiKey: 'sk-ant-observer', anthropicBaseUrl: server.url }),
    );
    answer = () => step.json(textMessage('still fine'));
    const message = await transport.send(helloRequest(), {
      observer: {
        onAttemptStart() {
          throw new Error('observer bug at start');
        },
        onAttemptEnd() {
          throw new Error('observer bug at end');
        },
      },
    });
    expect(message.content).toEqual([{ type: 'text', text: 'still fine' }]);
  });
});

describe('token refreshes', () => {
  it('reports a refresh that found a new token in the file', async () => {
    const file = join(tempDir, 'token');
    writeFileSync(file, 'stale-token');
    const refreshes: TokenRefresh[] = [];
    const transport = track(
      createTransport({
        env: { TPX_OAUTH_TOKEN_FILE: file, TPX_BASE_URL: `${server.url}/v1` },
        maxRetries: 0,
        observer: { onTokenRefresh: (refresh) => refreshes.push(refresh) },
      }),
    );
    let calls = 0;
    answer = (record) => {
      if (++calls === 1) writeFileSync(file, 'fresh-token');
      return record.headers['authorization'] === 'Bearer fresh-token'
        ? step.json(completion())
        : step.json({ error: { message: 'bad token', type: 'invalid_request_error' } }, { status: 401 });
    };
    await transport.send(helloRequest());
    expect(refreshes).toEqual([{ source: 'file', outcome: 'refreshed' }]);
  });
});
