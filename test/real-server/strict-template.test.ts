/**
 * A chat template that refuses a system message anywhere but first (`tiny-tools-strict`, as Qwen3's
 * templates do under vLLM and llama.cpp), with a small context (`-c 1024`), against both providers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { createTransport, isTransportError } from '../../src/index.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { startLlamaServer, type LlamaServer } from './llama-server.js';
import {
  claudeCodeShape,
  collect,
  forcedToolRequest,
  toolUses,
  validMessage,
} from './real-server-support.js';
import { startRecordingTap, type RecordingTap } from './recording-tap.js';

let server: LlamaServer;
let tap: RecordingTap;
const transports: ModelTransport[] = [];

function tpx(dialect: string): ModelTransport {
  const transport = createTransport({
    env: {},
    tpxToken: 'real-server-token',
    tpxBaseUrl: `${tap.url}/v1`,
    tpxDialect: dialect,
    maxRetries: 0,
  });
  transports.push(transport);
  return transport;
}

function anthropic(): ModelTransport {
  const transport = createTransport({
    env: {},
    anthropicApiKey: 'real-server-key',
    anthropicBaseUrl: tap.url,
    maxRetries: 0,
  });
  transports.push(transport);
  return transport;
}

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isTransportError(error)) throw new Error(`expected a TransportError, got ${String(error)}`);
  return error;
}

beforeAll(async () => {
  server = await startLlamaServer({ model: 'tiny-tools-strict', contextSize: 1024 });
  tap = await startRecordingTap(server.url);
});

afterAll(async () => {
  for (const transport of transports) await transport.close();
  await tap?.close();
  await server?.stop();
});

describe('Claude Code’s request shape on a template that wants the system message first', () => {
  it.each(['llamacpp', 'vllm', 'ollama', 'openai-generic'])(
    'is answered through the %s dialect, sent and streamed',
    async (dialect) => {
      const transport = tpx(dialect);
      const message = validMessage(await transport.send(claudeCodeShape()));
      expect(message.stop_reason).toMatch(/^(end_turn|max_tokens)$/);
      const sent = tap.exchanges.at(-1)!.request.json as { messages: { role: string }[] };
      expect(sent.messages.filter((entry) => entry.role === 'system')).toHaveLength(1);
      expect(sent.messages[0]!.role).toBe('system');
      const streamed = accumulateStream(await collect(transport.stream(claudeCodeShape())));
      expect(streamed.stop_reason).toBe(message.stop_reason);
    },
  );

  it('is answered with forced tool calls too', async () => {
    const request = {
      ...forcedToolRequest(400),
      system: 'Be brief.',
      messages: [
        { role: 'user' as const, content: 'Weather in Paris?' },
        { role: 'system' as const, content: 'Use Celsius.' },
      ],
    };
    const message = await tpx('llamacpp').send(request);
    expect(toolUses(message).length).toBeGreaterThan(0);
  });

  it('is refused by the server, as a 400 naming the template’s reason, when sent in place', async () => {
    // groq's profile keeps system messages where they are (Groq accepts them anywhere).
    const error = await failure(tpx('groq').send(claudeCodeShape()));
    expect(error.code).toBe('MODEL_EHTTP');
    expect(error.status).toBe(400);
    expect(error.body.error.type).toBe('invalid_request_error');
    expect(error.message).toContain('System message must be at the beginning.');
  });

  it('is refused on the native path too, where tpx sends the body as it is', async () => {
    const error = await failure(anthropic().send(claudeCodeShape()));
    expect(error.status).toBe(400);
    expect(error.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(error.message).toContain('System message must be at the beginning.');
    expect(tap.exchanges.at(-1)!.request.url).toBe('/v1/messages');
  });

  it('is refused by the server’s own count_tokens on the native path, as a Messages error', async () => {
    const { max_tokens: _maxTokens, ...countRequest } = claudeCodeShape();
    const error = await failure(anthropic().countTokens!(countRequest));
    expect(tap.exchanges.at(-1)!.request.url).toBe('/v1/messages/count_tokens');
    expect(error.status).toBe(400);
    expect(error.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(error.message).toContain('System message must be at the beginning.');
  });

  it('is counted on the server through the llamacpp dialect, exactly as the folded prompt it answers', async () => {
    const transport = tpx('llamacpp');
    const { max_tokens: _maxTokens, ...countRequest } = claudeCodeShape();
    const count = await transport.countTokens!(countRequest);
    await transport.send(claudeCodeShape());
    const usage = (tap.exchanges.at(-1)!.response.json as { usage: { prompt_tokens: number } }).usage;
    expect(count.input_tokens).toBe(usage.prompt_tokens);
  });
});

describe('a context overflow with -c 1024', () => {
  const tooLong = {
    model: 'tiny',
    max_tokens: 8,
    messages: [{ role: 'user' as const, content: 'word '.repeat(400) }],
  };

  it('reaches a tpx caller as 400 invalid_request_error with the server’s explanation', async () => {
    const error = await failure(tpx('llamacpp').send(tooLong));
    expect(error.code).toBe('MODEL_EHTTP');
    expect(error.status).toBe(400);
    expect(error.body.error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(/exceeds the available context size \(1024 tokens\)/);
  });

  it('reaches a tpx stream caller the same way, before any event', async () => {
    const events: unknown[] = [];
    const error = await failure(
      (async () => {
        for await (const event of tpx('llamacpp').stream(tooLong)) events.push(event);
      })(),
    );
    expect(events).toEqual([]);
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/exceeds the available context size \(1024 tokens\)/);
  });

  it('reaches a native stream caller as a Messages error before any event', async () => {
    const events: unknown[] = [];
    const error = await failure(
      (async () => {
        for await (const event of anthropic().stream(tooLong)) events.push(event);
      })(),
    );
    expect(events).toEqual([]);
    expect(error.status).toBe(400);
    expect(error.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(error.message).toMatch(/exceeds the available context size \(1024 tokens\)/);
  });

  it('is still counted by the server’s count_tokens, which does not check the context size', async () => {
    const { max_tokens: _maxTokens, ...countRequest } = tooLong;
    const count = await anthropic().countTokens!(countRequest);
    expect(count.input_tokens).toBeGreaterThan(1024);
  });

  it('reaches a native caller as a Messages error body, though llama.cpp answers in OpenAI’s shape', async () => {
    const error = await failure(anthropic().send(tooLong));
    const answered = tap.exchanges.at(-1)!.response.json as { error: { type: string } };
    expect(answered.error.type).toBe('exceed_context_size_error');
    expect(error.status).toBe(400);
    expect(error.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(error.message).toMatch(/exceeds the available context size \(1024 tokens\)/);
  });
});
