/**
 * The live view of `tpx serve`: `GET /tpx/exchanges` (newest first: id, time, status, upstream, model,
 * usage, durationMs) behind the proxy token, at most `--live-exchanges N` of them; `GET /tpx/status`, a
 * page that loads without the token, with a strict Content-Security-Policy and nothing from elsewhere;
 * and with `--workers`, every worker's exchanges whichever worker answers.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { startTpxServe } from './cli-process.js';
import { UPSTREAM_TOKEN } from './serve-support.js';

const PROXY_TOKEN = 'proxy-token-live-view-5c2e';

interface LiveView {
  upstreams: { name: string; provider: string; baseUrl?: string; breaker: string | null }[];
  exchanges: {
    id: string;
    time: string;
    status: number;
    upstream: string;
    model?: string;
    usage?: { input_tokens?: number; output_tokens?: number };
    durationMs: number;
    error?: { code?: string; message: string };
    worker?: number;
  }[];
}

/** One request on a connection of its own (so that `--workers` share them); resolves to status and body. */
function send(
  url: string,
  path: string,
  options: { method?: string; body?: unknown; token?: string } = {},
): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { connection: 'close' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
    const outgoing = request(
      `${url}${path}`,
      { method: options.method ?? 'GET', agent: false, headers },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text, headers: response.headers }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

function prompt(model: string, content: string) {
  return { model, max_tokens: 16, messages: [{ role: 'user', content }] };
}

let mock: MockModelServer;
beforeAll(async () => {
  mock = await startMockModel({ token: UPSTREAM_TOKEN });
});
afterAll(async () => {
  await mock.close();
});

describe('the live view of tpx serve', () => {
  it('lists the last N exchanges newest first, behind the proxy token', async () => {
    const serve = await startTpxServe(['--live-exchanges', '3'], {
      TPX_OAUTH_TOKEN: UPSTREAM_TOKEN,
      TPX_BASE_URL: mock.url,
      TPX_PROXY_TOKEN: PROXY_TOKEN,
    });
    try {
      for (const model of ['claude-one', 'claude-two', 'claude-three', 'claude-four']) {
        const answer = await send(serve.url, '/v1/messages', {
          method: 'POST',
          body: prompt(model, 'hi'),
          token: PROXY_TOKEN,
        });
        expect(answer.status).toBe(200);
      }
      const refused = await send(serve.url, '/v1/messages', {
        method: 'POST',
        body: { model: 'claude-five', messages: [] },
        token: PROXY_TOKEN,
      });
      expect(refused.status).toBe(400);

      expect((await send(serve.url, '/tpx/exchanges')).status).toBe(401);
      const answer = await send(serve.url, '/tpx/exchanges', { token: PROXY_TOKEN });
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('application/json');
      const view = JSON.parse(answer.text) as LiveView;
      expect(view.upstreams).toEqual([
        { name: 'default', provider: 'tpx', baseUrl: mock.url, breaker: null },
      ]);
      expect(view.exchanges.map((exchange) => exchange.model)).toEqual([
        'claude-five',
        'claude-four',
        'claude-three',
      ]);
      const [failed, latest] = view.exchanges;
      expect(failed).toMatchObject({ status: 400, upstream: 'default', error: { code: 'MODEL_EINVAL' } });
      expect(latest).toMatchObject({
        status: 200,
        upstream: 'default',
        usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
      });
      expect(latest!.id).toMatch(/^req_/);
      expect(latest!.durationMs).toBeGreaterThan(0);
      expect(Date.parse(latest!.time)).toBeLessThanOrEqual(Date.now());
      expect(Date.parse(view.exchanges[2]!.time)).toBeLessThanOrEqual(Date.parse(latest!.time));
    } finally {
      await serve.stop();
    }
  });

  it('serves the status page without the token, with a strict CSP and nothing from elsewhere', async () => {
    const serve = await startTpxServe([], {
      TPX_OAUTH_TOKEN: UPSTREAM_TOKEN,
      TPX_BASE_URL: mock.url,
      TPX_PROXY_TOKEN: PROXY_TOKEN,
    });
    try {
      const page = await send(serve.url, '/tpx/status');
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
      expect(csp).toContain("connect-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.text).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
      expect(page.text).not.toContain(PROXY_TOKEN);
      expect((await send(serve.url, '/tpx/status', { method: 'POST' })).status).toBe(405);
    } finally {
      await serve.stop();
    }
  });

  it('is off with --live-exchanges 0', async () => {
    const serve = await startTpxServe(['--live-exchanges', '0'], {
      TPX_OAUTH_TOKEN: UPSTREAM_TOKEN,
      TPX_BASE_URL: mock.url,
    });
    try {
      expect((await send(serve.url, '/tpx/exchanges')).status).toBe(404);
      expect((await send(serve.url, '/tpx/status')).status).toBe(404);
    } finally {
      await serve.stop();
    }
  });
});

describe('the live view of tpx serve --workers 2', () => {
  it("shows every worker's exchanges whichever worker answers", async () => {
    const { spawn } = await import('node:child_process');
    const { CLI } = await import('./cli-process.js');
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--workers', '2'], {
      env: { PATH: process.env['PATH'], TPX_OAUTH_TOKEN: UPSTREAM_TOKEN, TPX_BASE_URL: mock.url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const deadline = Date.now() + 40_000;
      let url: string | undefined;
      while (url === undefined && Date.now() < deadline) {
        url = /listening on (http:\/\/\S+) with 2 workers/.exec(stderr)?.[1];
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(url, stderr).toBeDefined();
      const models = Array.from({ length: 8 }, (_, index) => `claude-worker-${index}`);
      for (const model of models) {
        expect((await send(url!, '/v1/messages', { method: 'POST', body: prompt(model, 'hi') })).status).toBe(
          200,
        );
      }
      const workersSeen = new Set<number>();
      for (let look = 0; look < 4; look++) {
        const view = JSON.parse((await send(url!, '/tpx/exchanges')).text) as LiveView;
        expect(view.exchanges.map((exchange) => exchange.model)).toEqual([...models].reverse());
        for (const exchange of view.exchanges) workersSeen.add(exchange.worker!);
      }
      // Both workers served some of the exchanges, and each one's appear in every view.
      expect(workersSeen.size).toBe(2);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
