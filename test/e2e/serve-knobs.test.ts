/**
 * The knobs a local-model user needs, as `tpx serve` flags, each shown to take effect through the proxy
 * (a process, on loopback) against a scripted upstream whose behaviour each test sets: `--first-byte-timeout`,
 * `--max-retries` (winning over `TPX_MAX_RETRIES`), `--log-level`, and the log's two forms — JSON lines when
 * stdout is a pipe, one human-readable line per exchange on a terminal (a pseudo-terminal from util-linux's
 * `script`).
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';
import { CLI, startTpxServe, type TpxServe } from './cli-process.js';

const REQUEST = {
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  messages: [{ role: 'user', content: 'hi' }],
};

async function ask(proxyUrl: string): Promise<{ status: number; body: { error?: { message: string } } }> {
  const response = await fetch(`${proxyUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(REQUEST),
  });
  return { status: response.status, body: (await response.json()) as { error?: { message: string } } };
}

describe('tpx serve knobs', () => {
  let mode: 'ok' | 'hang' | 'failing' = 'ok';
  let upstream: ScriptedServer;
  /** --first-byte-timeout 300ms --max-retries 0 --log-level warn, with TPX_MAX_RETRIES=3 set. */
  let strict: TpxServe;
  const chatRequests = () =>
    upstream.requests.filter((request) => request.url === '/v1/chat/completions').length;
  const upstreamFlags = () => ['--base-url', `${upstream.url}/v1`, '--token', 'local'];
  const logLines = (serve: TpxServe) =>
    serve
      .stdout()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  beforeAll(async () => {
    upstream = await startScriptedServer((record) => {
      if (record.url === '/v1/models') return step.json({ data: [{ id: 'm' }] });
      if (mode === 'hang') return step.noHeaders();
      if (mode === 'failing') {
        return step.json(
          { error: { message: 'failing' } },
          { status: 500, headers: { 'retry-after-ms': '10' } },
        );
      }
      return step.json({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      });
    });
    strict = await startTpxServe(
      [...upstreamFlags(), '--first-byte-timeout', '300ms', '--max-retries', '0', '--log-level', 'warn'],
      { TPX_MAX_RETRIES: '3' },
    );
  });

  afterAll(async () => {
    await strict?.stop();
    await upstream?.close();
  });

  it(
    '--first-byte-timeout bounds the wait for response headers, naming the deadline in words',
    { timeout: 60_000 },
    async () => {
      mode = 'hang';
      const before = chatRequests();
      const { status, body } = await ask(strict.url);
      expect(status).toBe(504);
      expect(body.error!.message).toContain('no response headers within 300 ms (first-byte deadline)');
      expect(body.error!.message).not.toContain('TimeoutMs');
      expect(chatRequests() - before).toBe(1);
    },
  );

  it(
    '--max-retries sets how often a failed exchange is retried, and wins over TPX_MAX_RETRIES',
    { timeout: 60_000 },
    async () => {
      mode = 'failing';
      let before = chatRequests();
      expect((await ask(strict.url)).status).toBe(500);
      expect(chatRequests() - before).toBe(1);
      const retrying = await startTpxServe([...upstreamFlags(), '--max-retries', '2'], {});
      try {
        before = chatRequests();
        expect((await ask(retrying.url)).status).toBe(500);
        expect(chatRequests() - before).toBe(3);
      } finally {
        await retrying.stop();
      }
    },
  );

  it(
    '--log-level warn keeps failed exchanges in the JSON log and leaves successful ones out',
    { timeout: 60_000 },
    async () => {
      mode = 'ok';
      expect((await ask(strict.url)).status).toBe(200);
      // The log is written in batches: the exchanges of the earlier tests are there once a later line is.
      mode = 'failing';
      expect((await ask(strict.url)).status).toBe(500);
      let exchanges: Record<string, unknown>[] = [];
      for (let waited = 0; waited < 5_000 && exchanges.length < 3; waited += 50) {
        exchanges = logLines(strict).filter((line) => line['msg'] === 'exchange');
        await new Promise((wake) => setTimeout(wake, 50));
      }
      expect(exchanges.map((line) => [line['level'], line['status']])).toEqual([
        [40, 504],
        [40, 500],
        [40, 500],
      ]);
    },
  );

  it('writes one human-readable line per exchange on a terminal', { timeout: 60_000 }, async () => {
    mode = 'ok';
    const command = [process.execPath, CLI, 'serve', '--port', '0', ...upstreamFlags()]
      .map((part) => `'${part.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    // `script` gives the proxy a pseudo-terminal for stdout; its stderr (the banner) shares it.
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', TERM: 'dumb' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const waitFor = async (pattern: RegExp): Promise<RegExpExecArray> => {
      for (let waited = 0; waited < 20_000; waited += 50) {
        const match = pattern.exec(output);
        if (match !== null) return match;
        await new Promise((wake) => setTimeout(wake, 50));
      }
      throw new Error(`not seen: ${String(pattern)} in ${output}`);
    };
    try {
      const [, url] = await waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      expect((await ask(url!)).status).toBe(200);
      const [line] = await waitFor(
        /\d\d:\d\d:\d\d INFO +POST \/v1\/messages 200 \d+ms claude-sonnet-4-5→m in=3 out=1/,
      );
      expect(line).not.toContain('{');
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
    }
  });
});
