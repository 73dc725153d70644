/**
 * `tpx serve --journal DIR`: one JSON line per exchange with the caller's request, each body sent
 * upstream, the answer (a stream's accumulated message) or the error, status, upstream, model, usage and
 * timings; never a credential; media as hash and size unless kept; rotated by size; a directory that
 * cannot be written is logged once and fails no exchange.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { startTpxServe, type TpxServe } from './cli-process.js';
import { startTpxProxy, UPSTREAM_TOKEN } from './serve-support.js';

const PROXY_TOKEN = 'proxy-token-journal-7f3a91';
/** 3 KiB of PNG-looking base64: long enough to be replaced by its hash. */
const IMAGE_DATA = Buffer.alloc(3072, 7).toString('base64');

function journalLines(dir: string): Record<string, unknown>[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n'))
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function everything(dir: string): string {
  return readdirSync(dir)
    .map((name) => readFileSync(join(dir, name), 'utf8'))
    .join('\n');
}

let mock: MockModelServer;
let serve: TpxServe | undefined;
beforeAll(async () => {
  mock = await startMockModel({ token: UPSTREAM_TOKEN });
});
afterAll(async () => {
  await mock.close();
});
afterEach(async () => {
  await serve?.stop();
  serve = undefined;
});

const env = () => ({ TPX_OAUTH_TOKEN: UPSTREAM_TOKEN, TPX_BASE_URL: mock.url, TPX_PROXY_TOKEN: PROXY_TOKEN });

describe('tpx serve --journal', () => {
  it('writes one line per exchange: request, bodies sent upstream, answer, usage and timings, no credential', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tpx-journal-'));
    serve = await startTpxServe(['--journal', dir], env());
    const client = new Anthropic({ baseURL: serve.url, apiKey: PROXY_TOKEN, maxRetries: 0 });
    const message = await client.messages.create({
      model: 'claude-journal-json',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    const streamed = await client.messages
      .stream({
        model: 'claude-journal-stream',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Stream' }],
      })
      .finalMessage();
    const refused = await fetch(`${serve.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': PROXY_TOKEN },
      body: JSON.stringify({ model: 'claude-journal-bad', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(refused.status).toBe(400);
    expect(await serve.stop()).toBe(0);
    serve = undefined;

    const lines = journalLines(dir);
    expect(lines.map((line) => line['model'])).toEqual([
      'claude-journal-json',
      'claude-journal-stream',
      'claude-journal-bad',
    ]);
    const [json, stream, bad] = lines as [
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    expect(json).toMatchObject({
      status: 200,
      upstream: 'default',
      provider: 'tpx',
      stream: false,
      request: { model: 'claude-journal-json', messages: [{ role: 'user', content: 'Say hello' }] },
      response: {
        id: message.id,
        content: message.content,
        usage: { output_tokens: message.usage.output_tokens },
      },
      usage: { input_tokens: message.usage.input_tokens, output_tokens: message.usage.output_tokens },
    });
    expect(typeof json['id']).toBe('string');
    expect(Date.parse(json['time'] as string)).toBeGreaterThan(Date.now() - 60_000);
    expect(json['durationMs']).toBeGreaterThan(0);
    expect(json['firstByteMs']).toBeGreaterThan(0);
    const sent = json['upstreamRequests'] as { attempt: number; body: Record<string, unknown> }[];
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      attempt: 1,
      body: { messages: [{ role: 'user', content: 'Say hello' }] },
    });
    expect(json['upstreamModel']).toBe(sent[0]!.body['model']);

    expect(stream).toMatchObject({ status: 200, stream: true, response: { content: streamed.content } });
    expect((stream['upstreamRequests'] as unknown[]).length).toBe(1);

    expect(bad).toMatchObject({
      status: 400,
      errorCode: 'MODEL_EINVAL',
      error: { type: 'error', error: { type: 'invalid_request_error' } },
    });
    expect(bad['response']).toBeUndefined();
    expect(bad['upstreamRequests']).toBeUndefined();

    const text = everything(dir);
    expect(text).not.toContain(UPSTREAM_TOKEN);
    expect(text).not.toContain(PROXY_TOKEN);
  });

  it('keeps image data as its sha256 and size, or as sent with --journal-media keep', async () => {
    const request = {
      model: 'claude-journal-image',
      max_tokens: 32,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE_DATA } },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ],
    };
    for (const media of ['hash', 'keep'] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'tpx-journal-media-'));
      serve = await startTpxServe(['--journal', dir, '--journal-media', media], env());
      const response = await fetch(`${serve.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': PROXY_TOKEN },
        body: JSON.stringify(request),
      });
      expect(response.status).toBe(200);
      await serve.stop();
      serve = undefined;
      const [line] = journalLines(dir);
      const text = everything(dir);
      if (media === 'keep') {
        expect(text).toContain(IMAGE_DATA);
        continue;
      }
      expect(text).not.toContain(IMAGE_DATA.slice(0, 200));
      const source = ((line!['request'] as typeof request).messages[0]!.content[0] as { source: unknown })
        .source;
      expect(source).toEqual({
        type: 'base64',
        media_type: 'image/png',
        data: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        bytes: 3072,
      });
      // The data URL sent upstream is reduced the same way.
      expect(JSON.stringify(line!['upstreamRequests'])).toMatch(
        /data:image\/png;sha256=[0-9a-f]{64};bytes=3072/,
      );
    }
  });

  it('logs an unwritable journal directory once and still answers every exchange', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'tpx-journal-blocked-'));
    const blocker = join(parent, 'not-a-directory');
    writeFileSync(blocker, 'a file where the journal directory should be');
    serve = await startTpxServe(['--journal', join(blocker, 'journal')], env());
    for (let index = 0; index < 3; index++) {
      const response = await fetch(`${serve.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': PROXY_TOKEN },
        body: JSON.stringify({
          model: 'claude-test',
          max_tokens: 16,
          messages: [{ role: 'user', content: `hi ${index}` }],
        }),
      });
      expect(response.status).toBe(200);
      // One exchange at a time, so that each one's journal write is tried (and fails) on its own.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await serve.stop();
    const warnings = serve
      .stdout()
      .split('\n')
      .filter((line) => line.includes('journal: cannot write'));
    serve = undefined;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('ENOTDIR');
  });
});

describe('the journal of startServer', () => {
  it('rotates to a new file before one passes its size limit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tpx-journal-rotate-'));
    const proxy = await startTpxProxy({ serve: { journal: { dir, maxFileBytes: 4_000, maxFiles: 3 } } });
    try {
      for (let index = 0; index < 8; index++) {
        const response = await fetch(`${proxy.server.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'claude-test',
            max_tokens: 16,
            messages: [{ role: 'user', content: `${index} ${'x'.repeat(1_500)}` }],
          }),
        });
        expect(response.status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await proxy.close();
    }
    const files = readdirSync(dir).sort();
    expect(files.length).toBe(3);
    for (const name of files) {
      expect(name).toMatch(/^tpx-\d{8}T\d{9}Z-\d+-\d+\.jsonl$/);
      const size = readFileSync(join(dir, name)).length;
      expect(size).toBeLessThanOrEqual(4_000);
    }
    // The newest files are kept: the last exchange is in them.
    const contents = journalLines(dir).map(
      (line) => (line['request'] as { messages: { content: string }[] }).messages[0]!.content,
    );
    expect(contents.at(-1)!.startsWith('7 ')).toBe(true);
  });
});
