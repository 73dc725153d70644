/**
 * `tpx serve --workers 2` as a real process tree: both workers answer on the one port, `/metrics`
 * answers the sum over the workers whichever one is asked, and SIGTERM drains every worker and exits 0.
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
      const deadline = Date.now() + 15_000;
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
  }, 40_000);
});

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
