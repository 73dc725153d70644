/**
 * `tpx serve --workers 2` as a real process tree: both workers answer on the one port, `/metrics`
 * answers the sum over the workers whichever one is asked, and SIGTERM drains every worker and exits 0:
 * each worker's `/readyz` turns 503 while `/healthz` stays 200, and the streams in flight on each
 * worker finish.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { parseWorkerCount } from '../../src/server/workers.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

let mock: MockModelServer;
beforeAll(async () => {
  mock = await startMockModel({ token: 'workers-token' });
});
afterAll(async () => {
  await mock.close();
});

/** One request on a connection of its own, so that the workers share the requests. */
function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${url}/v1/messages`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close' } },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(JSON.stringify(body));
  });
}

describe('tpx serve --workers', () => {
  it('shares the port between workers, sums their metrics, and drains them all on SIGTERM', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--workers', '2'], {
      env: { PATH: process.env['PATH'], TPX_OAUTH_TOKEN: 'workers-token', TPX_BASE_URL: mock.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // Two workers each load the token counter before listening: seconds on a busy machine.
      const deadline = Date.now() + 40_000;
      let url: string | undefined;
      while (url === undefined && Date.now() < deadline) {
        url = /listening on (http:\/\/\S+) with 2 workers/.exec(stderr)?.[1];
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(url, stderr).toBeDefined();
      const requests = 8;
      for (let index = 0; index < requests; index++) {
        const answer = await post(url!, {
          model: 'claude-test',
          max_tokens: 16,
          messages: [{ role: 'user', content: `hello ${index}` }],
        });
        expect(answer.status).toBe(200);
      }
      // Whichever worker answers the scrape, it reports every worker's exchanges.
      for (let scrape = 0; scrape < 3; scrape++) {
        const text = await (await fetch(`${url!}/metrics`, { headers: { connection: 'close' } })).text();
        const line = text.split('\n').find((entry) => entry.startsWith('tpx_requests_total{'));
        expect(line).toContain('status="200"');
        expect(Number(line!.slice(line!.lastIndexOf(' ') + 1))).toBe(requests);
      }
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const lines = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; pid: number });
      const servedBy = new Set(lines.filter((line) => line.msg === 'exchange').map((line) => line.pid));
      expect(servedBy.size).toBe(2);
      const closedBy = new Set(lines.filter((line) => line.msg === 'closed').map((line) => line.pid));
      expect(closedBy).toEqual(servedBy);
      expect(stderr).toContain('draining every worker');
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  }, 90_000);
});

describe('tpx serve --workers, draining', () => {
  let slowMock: MockModelServer;
  beforeAll(async () => {
    // Each stream chunk 250 ms apart: a stream is still running when SIGTERM arrives.
    slowMock = await startMockModel({ token: 'workers-token', chunkDelayMs: 250 });
  });
  afterAll(async () => {
    await slowMock.close();
  });

  it('turns /readyz to 503 on every worker at SIGTERM while /healthz stays 200, and lets every in-flight stream finish', async () => {
    const child = spawn(
      process.execPath,
      [CLI, 'serve', '--port', '0', '--workers', '2', '--drain-delay', '3000'],
      {
        env: { PATH: process.env['PATH'], TPX_OAUTH_TOKEN: 'workers-token', TPX_BASE_URL: slowMock.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // Two workers each load the token counter before listening: seconds on a busy machine.
      const deadline = Date.now() + 40_000;
      let url: string | undefined;
      while (url === undefined && Date.now() < deadline) {
        url = /listening on (http:\/\/\S+) with 2 workers/.exec(stderr)?.[1];
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(url, stderr).toBeDefined();
      const get = async (path: string) => {
        const response = await fetch(`${url!}${path}`, { headers: { connection: 'close' } });
        return { status: response.status, body: await response.text() };
      };
      // Before the drain, every new connection (the primary hands them to the workers in turn) is ready.
      for (let probe = 0; probe < 4; probe++) expect((await get('/readyz')).status).toBe(200);

      // Four streams, each on a connection of its own, so that both workers hold some when SIGTERM comes.
      const streams = Array.from({ length: 4 }, (_, index) =>
        post(url!, {
          model: 'claude-test',
          max_tokens: 16,
          stream: true,
          messages: [{ role: 'user', content: `a stream that outlives the signal, number ${index}` }],
        }),
      );
      const streamDeadline = Date.now() + 10_000;
      while (countExchangesStarted(slowMock) < 4 && Date.now() < streamDeadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(countExchangesStarted(slowMock)).toBe(4);

      child.kill('SIGTERM');
      const drainStarted = Date.now() + 10_000;
      while (!stderr.includes('draining every worker') && Date.now() < drainStarted) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Give each worker the primary's message, then ask every one of them, connection by connection.
      await new Promise((resolve) => setTimeout(resolve, 300));
      for (let probe = 0; probe < 6; probe++) {
        const ready = await get('/readyz');
        expect(ready.status, `probe ${probe}`).toBe(503);
        expect((JSON.parse(ready.body) as { ready: boolean }).ready).toBe(false);
      }
      for (let probe = 0; probe < 4; probe++) expect((await get('/healthz')).status).toBe(200);

      const answers = await Promise.all(streams);
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.text).toContain('event: message_stop');
      }
      expect(await exited).toBe(0);
      const lines = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; pid: number });
      const streamedBy = new Set(lines.filter((line) => line.msg === 'exchange').map((line) => line.pid));
      expect(streamedBy.size).toBe(2);
      const closedBy = new Set(lines.filter((line) => line.msg === 'closed').map((line) => line.pid));
      expect(closedBy).toEqual(streamedBy);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  }, 90_000);
});

/** How many chat completions the mock has received. */
function countExchangesStarted(mock: MockModelServer): number {
  return mock.requests.filter((entry) => entry.path.endsWith('/chat/completions')).length;
}

describe('parseWorkerCount', () => {
  it('reads a whole number, or auto as the number of cores', () => {
    expect(parseWorkerCount('3')).toBe(3);
    expect(parseWorkerCount('auto', () => 6)).toBe(6);
  });

  it('refuses zero, fractions and words with MODEL_ECONFIG', () => {
    for (const value of ['0', '1.5', 'many', '-2', '']) {
      expect(() => parseWorkerCount(value), value).toThrow(/--workers must be a whole number/);
    }
  });
});
