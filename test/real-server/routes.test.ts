/**
 * Routes end to end with real parts only: two real llama.cpp servers behind `tpx serve --config` (the
 * built binary, as users run it), the official `@anthropic-ai/sdk` as the client. Requests are routed by
 * model, a tool conversation crosses from one upstream to the other, and after one server is killed the
 * next request falls back to the other before its first byte, and the breaker then skips the dead one.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTpxServe, type TpxServe } from '../e2e/cli-process.js';
import { startLlamaServer, type LlamaServer } from './llama-server.js';
import { weatherTool } from './real-server-support.js';

let small: LlamaServer;
let big: LlamaServer;
let serve: TpxServe;
let client: Anthropic;

beforeAll(async () => {
  [small, big] = await Promise.all([
    startLlamaServer({ model: 'tiny-tools' }),
    startLlamaServer({ model: 'tiny-tools' }),
  ]);
  const directory = mkdtempSync(join(tmpdir(), 'tpx-real-routes-'));
  const config = join(directory, 'routes.json');
  writeFileSync(
    config,
    JSON.stringify({
      upstreams: {
        small: { baseUrl: small.chatBaseUrl, token: 'local', dialect: 'llamacpp' },
        big: { baseUrl: big.chatBaseUrl, token: 'local', dialect: 'llamacpp', maxTokens: 300 },
      },
      routes: [
        { match: { model: '*haiku*' }, to: 'small:tiny-small' },
        { to: 'big:tiny-big', fallback: ['small:tiny-small'] },
      ],
      breaker: { failures: 1, coolDownMs: 60_000 },
    }),
  );
  serve = await startTpxServe(['--config', config, '--max-retries', '1'], {});
  client = new Anthropic({ baseURL: serve.url, apiKey: 'unused', maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await serve?.stop();
  await Promise.all([small?.stop(), big?.stop()]);
});

const forced = {
  max_tokens: 200,
  tools: [weatherTool as Anthropic.Tool],
  tool_choice: { type: 'any' as const },
  messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }],
};

async function metricLine(pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${serve.url}/metrics`)).text();
  const line = text.split('\n').find((candidate) => pattern.test(candidate));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe('two real llama.cpp servers behind tpx serve --config', () => {
  it('routes by model, naming the upstream and model that ran', async () => {
    const haiku = await client.messages
      .create({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(haiku.response.headers.get('x-tpx-upstream')).toBe('small');
    expect(haiku.response.headers.get('x-tpx-model')).toBe('tiny-small');
    expect(haiku.data.model).toBe('claude-haiku-4-5');

    const sonnet = await client.messages
      .create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(sonnet.response.headers.get('x-tpx-upstream')).toBe('big');
    expect(sonnet.data.type).toBe('message');
  });

  it('keeps tool ids paired when a conversation crosses from one upstream to the other', async () => {
    const first = await client.messages.create({ model: 'claude-haiku-4-5', ...forced });
    const uses = first.content.filter((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    expect(uses.length).toBeGreaterThan(0);
    const second = await client.messages
      .create({
        model: 'claude-sonnet-4-5',
        max_tokens: 32,
        tools: forced.tools,
        messages: [
          ...forced.messages,
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: uses.map((use) => ({
              type: 'tool_result' as const,
              tool_use_id: use.id,
              content: 'sunny',
            })),
          },
        ],
      })
      .withResponse();
    expect(second.response.headers.get('x-tpx-upstream')).toBe('big');
    expect(second.data.type).toBe('message');
  });

  it('falls back to the other server once one is killed, then its breaker skips it', async () => {
    await big.stop();
    const fallback = await client.messages
      .create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(fallback.response.headers.get('x-tpx-upstream')).toBe('small');
    expect(fallback.response.headers.get('x-tpx-model')).toBe('tiny-small');

    const ready = (await (await fetch(`${serve.url}/readyz`)).json()) as {
      upstreams: { name: string; state: string }[];
    };
    expect(ready.upstreams.find((upstream) => upstream.name === 'big')?.state).toBe('open');

    const attemptsOnBig = await metricLine(/^tpx_upstream_attempts_total\{.*upstream="big"/);
    const stream = client.messages.stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const message = await stream.finalMessage();
    expect(message.model).toBe('claude-sonnet-4-5');
    // The dead server was not tried again: its breaker is open for the cool-down.
    expect(await metricLine(/^tpx_upstream_attempts_total\{.*upstream="big"/)).toBe(attemptsOnBig);
  });
});
