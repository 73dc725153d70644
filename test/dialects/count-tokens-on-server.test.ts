/**
 * `count_tokens` on the `tpx` path asks the server where the dialect says it can count
 * (`llamacpp`: `/apply-template` then `/tokenize`; `vllm`: `/tokenize`), and falls back to the local
 * estimate where the server cannot. The scripted servers speak the servers' real shapes: vLLM's
 * `TokenizeChatRequest` / `TokenizeResponse` (`{count, max_model_len, tokens}`, FastAPI's
 * `{"detail":"Not Found"}` where the route is missing) and llama.cpp's (as b11669 answers).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTransport, isTransportError, type ModelTransport } from '../../src/index.js';
import type { CountTokensRequest } from '../../src/transport/types.js';
import {
  startScriptedServer,
  step,
  type RecordedRequest,
  type ScriptedServer,
  type Step,
} from '../helpers/scripted-server.js';

const TOKEN = 'count-test-token-5b1d';

/** Claude Code's shape: a system prompt, a system message between turns, a tool. */
const request: CountTokensRequest = {
  model: 'qwen3',
  system: 'You are a coding assistant.',
  tools: [
    { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
  ],
  messages: [
    { role: 'user', content: 'List the files.' },
    { role: 'assistant', content: 'Which folder?' },
    { role: 'system', content: 'Plan mode is on.' },
    { role: 'user', content: 'The root.' },
  ],
};

/** llama.cpp b11669's answer to a route it does not serve, as it sent it. */
const llamaCppNotFound = '{"error":{"message":"File Not Found","type":"not_found_error","code":404}}';

let server: ScriptedServer | undefined;
const transports: ModelTransport[] = [];

afterEach(async () => {
  for (const transport of transports.splice(0)) await transport.close();
  await server?.close();
  server = undefined;
});

async function serve(answer: (record: RecordedRequest) => Step): Promise<ScriptedServer> {
  server = await startScriptedServer(answer);
  return server;
}

function transportFor(dialect: string, baseUrl: string): ModelTransport {
  const transport = createTransport({
    env: {},
    tpxToken: TOKEN,
    tpxBaseUrl: `${baseUrl}/v1`,
    tpxDialect: dialect,
    maxRetries: 0,
  });
  transports.push(transport);
  return transport;
}

/** The local estimate for `request`: what a dialect that never asks the server answers. */
async function estimate(): Promise<number> {
  const scripted = await startScriptedServer([]);
  try {
    const transport = transportFor('ollama', scripted.url);
    const count = await transport.countTokens!(request);
    expect(scripted.requests).toHaveLength(0);
    return count.input_tokens;
  } finally {
    await scripted.close();
  }
}

describe('vllm: count_tokens asks POST /tokenize', () => {
  it('returns the count of vLLM’s TokenizeResponse for the chat request tpx would send', async () => {
    const scripted = await serve(() =>
      step.json({ count: 57, max_model_len: 32768, tokens: Array.from({ length: 57 }, (_, index) => index) }),
    );
    const count = await transportFor('vllm', scripted.url).countTokens!(request);
    expect(count).toEqual({ input_tokens: 57 });
    expect(scripted.requests).toHaveLength(1);
    const sent = scripted.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/tokenize');
    expect(sent.headers['authorization']).toBe(`Bearer ${TOKEN}`);
    const body = sent.json as {
      model: string;
      messages: { role: string }[];
      tools: { type: string; function: { name: string } }[];
      add_generation_prompt: boolean;
    };
    expect(body.model).toBe('qwen3');
    expect(body.add_generation_prompt).toBe(true);
    // The prompt counted is the folded one the chat template will see: one system message, first.
    expect(body.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(body.tools.map((tool) => [tool.type, tool.function.name])).toEqual([['function', 'get_weather']]);
  });

  it('falls back to the local estimate when the server has no /tokenize (FastAPI’s 404)', async () => {
    const expected = await estimate();
    const scripted = await serve(() => step.json({ detail: 'Not Found' }, { status: 404 }));
    const count = await transportFor('vllm', scripted.url).countTokens!(request);
    expect(scripted.requests.map((sent) => sent.url)).toEqual(['/tokenize']);
    expect(count).toEqual({ input_tokens: expected });
  });

  it('falls back to the local estimate when /tokenize fails or answers something that is not a count', async () => {
    const expected = await estimate();
    const answers: Step[] = [
      step.json(
        { object: 'error', message: 'tokenizer crashed', type: 'InternalServerError', code: 500 },
        { status: 500 },
      ),
      step.json({ count: -3, max_model_len: 32768, tokens: [] }),
      step.text(200, 'not json', { 'content-type': 'text/plain' }),
    ];
    for (const answer of answers) {
      const scripted = await serve(() => answer);
      const count = await transportFor('vllm', scripted.url).countTokens!(request);
      expect(count).toEqual({ input_tokens: expected });
      await scripted.close();
    }
  });

  it('fails with MODEL_EAUTH, not an estimate, when the server refuses the token', async () => {
    const scripted = await serve(() =>
      step.json({ error: { message: 'Unauthorized', type: 'invalid_request_error' } }, { status: 401 }),
    );
    const error = await transportFor('vllm', scripted.url).countTokens!(request).catch(
      (caught: unknown) => caught,
    );
    expect(isTransportError(error) && error.code).toBe('MODEL_EAUTH');
  });
});

describe('llamacpp: count_tokens asks POST /apply-template, then POST /tokenize', () => {
  it('returns the number of tokens of the templated prompt', async () => {
    const scripted = await serve((record) =>
      record.url === '/apply-template'
        ? step.json({ prompt: '<|im_start|>system\nYou are a coding assistant.<|im_end|>\n' })
        : step.json({ tokens: [1, 2, 3, 4, 5, 6, 7, 8, 9] }),
    );
    const count = await transportFor('llamacpp', scripted.url).countTokens!(request);
    expect(count).toEqual({ input_tokens: 9 });
    expect(scripted.requests.map((sent) => sent.url)).toEqual(['/apply-template', '/tokenize']);
    const templated = scripted.requests[0]!.json as { messages: { role: string }[]; stream?: unknown };
    expect(templated.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
    ]);
    expect(templated.stream).toBeUndefined();
    expect(scripted.requests[1]!.json).toEqual({
      content: '<|im_start|>system\nYou are a coding assistant.<|im_end|>\n',
      add_special: true,
      parse_special: true,
    });
  });

  it('falls back to the local estimate when the server has no such route (llama.cpp’s 404)', async () => {
    const expected = await estimate();
    const scripted = await serve(() =>
      step.text(404, llamaCppNotFound, { 'content-type': 'application/json; charset=utf-8' }),
    );
    const count = await transportFor('llamacpp', scripted.url).countTokens!(request);
    expect(scripted.requests.map((sent) => sent.url)).toEqual(['/apply-template']);
    expect(count).toEqual({ input_tokens: expected });
  });

  it('falls back to the local estimate when /tokenize answers without a token list', async () => {
    const expected = await estimate();
    const scripted = await serve((record) =>
      record.url === '/apply-template'
        ? step.json({ prompt: 'x' })
        : step.json({ error: 'busy' }, { status: 503 }),
    );
    const count = await transportFor('llamacpp', scripted.url).countTokens!(request);
    expect(scripted.requests.map((sent) => sent.url)).toEqual(['/apply-template', '/tokenize']);
    expect(count).toEqual({ input_tokens: expected });
  });
});
