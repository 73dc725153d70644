/**
 * `--config FILE` / `TPX_CONFIG` on the `tpx` binary: an invalid routes file stops start-up with exit 2
 * and a message naming the key; a valid one is listed in the banner and routes requests, each answer
 * naming the upstream and model that ran.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { runTpx, startTpxServe } from './cli-process.js';

/** A loopback URL nothing listens on. */
async function refusingUrl(): Promise<string> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

const directory = mkdtempSync(join(tmpdir(), 'tpx-routes-'));

function writeConfig(name: string, value: unknown): string {
  const path = join(directory, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return path;
}

describe('an invalid routes file stops start-up with exit 2, naming the key', () => {
  const upstream = { baseUrl: 'http://127.0.0.1:9/v1', token: 'local' };
  const cases: [string, unknown, string][] = [
    [
      'an unknown key',
      { upstreams: { local: { ...upstream, modle: 'x' } }, routes: [{ to: 'local' }] },
      'unknown key upstreams.local.modle',
    ],
    [
      'an unknown upstream',
      { upstreams: { local: upstream }, routes: [{ to: 'cloud:big' }] },
      'routes[0].to names the upstream "cloud"',
    ],
    [
      'a fallback cycle',
      { upstreams: { local: upstream }, routes: [{ to: 'local:a', fallback: ['local:b', 'local:a'] }] },
      'routes[0].fallback[1] falls back to local:a',
    ],
    [
      'two token sources',
      { upstreams: { local: { ...upstream, tokenCommand: 'echo t' } }, routes: [{ to: 'local' }] },
      'two token sources (upstreams.local.token, upstreams.local.tokenCommand)',
    ],
    ['a file that is not JSON', '{ "upstreams": ', 'is not valid JSON'],
  ];
  for (const [what, value, named] of cases) {
    it(`refuses ${what}`, async () => {
      const path = writeConfig(`${what.replaceAll(' ', '-')}.json`, value);
      const result = await runTpx(['serve', '--port', '0', '--config', path]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('configuration error');
      expect(result.stderr).toContain(named);
    });
  }

  it('names TPX_CONFIG when the file it names cannot be read, for tpx send too', async () => {
    const result = await runTpx(
      ['send', '-'],
      { TPX_CONFIG: join(directory, 'missing.json') },
      { input: '{}' },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('TPX_CONFIG names');
    expect(result.stderr).toContain('ENOENT');
  });
});

describe('tpx serve --config', () => {
  let local: MockModelServer;
  let cloud: MockModelServer;
  beforeAll(async () => {
    local = await startMockModel({ token: 'token-local' });
    cloud = await startMockModel({ token: 'token-cloud' });
  });
  afterAll(async () => {
    await local.close();
    await cloud.close();
  });

  it('lists the upstreams and routes in its banner and names what ran on every answer', async () => {
    // A token file relative to the routes file's own directory.
    writeFileSync(join(directory, 'cloud-token'), 'token-cloud\n');
    const path = writeConfig('routes.json', {
      upstreams: {
        local: { baseUrl: local.url, token: 'token-local', dialect: 'llamacpp' },
        cloud: { baseUrl: cloud.url, tokenFile: 'cloud-token', maxTokens: 8192 },
      },
      routes: [
        { match: { model: '*haiku*' }, to: 'local:small' },
        { to: 'local:big', fallback: ['cloud:huge'] },
      ],
    });
    // The single-upstream variables are not read with a routes file.
    const serve = await startTpxServe(['--config', path], { TPX_BASE_URL: 'http://127.0.0.1:9/v1' });
    try {
      const banner = serve.stderr();
      expect(banner).toContain(`upstreams (from ${path}; breaker: 3 failures, 30000 ms cool-down):`);
      expect(banner).toContain(
        `local: ${local.url}, llamacpp, chat wire, token from upstreams.local.token [closed]`,
      );
      expect(banner).toContain('token from upstreams.cloud.tokenFile, max_tokens at most 8192 [closed]');
      expect(banner).toContain('1. model *haiku* → local:small');
      expect(banner).toContain('2. any request → local:big, then cloud:huge');
      expect(banner).not.toContain('token-local');

      const response = await fetch(`${serve.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'claude-haiku-4-5',
          max_tokens: 32,
          messages: [{ role: 'user', content: 'Hello' }],
        }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-tpx-upstream')).toBe('local');
      expect(response.headers.get('x-tpx-model')).toBe('small');
      await response.arrayBuffer();
    } finally {
      await serve.stop();
    }
  });
});

describe('every upstream of a routes file is checked at start-up and by tpx doctor', () => {
  let local: MockModelServer;
  beforeAll(async () => {
    local = await startMockModel({ token: 'token-local', model: 'qwen3-4b' });
  });
  afterAll(async () => {
    await local.close();
  });

  async function twoUpstreams(): Promise<string> {
    return writeConfig('probe.json', {
      upstreams: {
        local: { baseUrl: local.url, token: 'token-local' },
        down: { baseUrl: await refusingUrl(), token: 'token-down' },
      },
      routes: [{ to: 'local:qwen3-4b', fallback: ['down:big'] }],
    });
  }

  it('names the upstream that did not answer in the banner, and serves anyway', async () => {
    const serve = await startTpxServe(['--config', await twoUpstreams()], {});
    try {
      const banner = serve.stderr();
      expect(banner).toContain('upstream local:');
      expect(banner).toContain('upstream models: qwen3-4b');
      expect(banner).toMatch(/warning: the upstream down \(http:\/\/127\.0\.0\.1:\d+\/v1\) did not answer/);
      expect(banner).toContain('fix: start it, or correct upstreams.down.baseUrl');
    } finally {
      await serve.stop();
    }
  });

  it('tpx doctor --config checks each upstream and names each that fails', async () => {
    const result = await runTpx(['doctor', '--config', await twoUpstreams()]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`upstream local (${local.url}):`);
    expect(result.stdout).toContain('chat (model qwen3-4b): answered');
    expect(result.stdout).toMatch(
      /upstream down \(http:\/\/127\.0\.0\.1:\d+\/v1\):\n {2}FAILED: model list failed: MODEL_ETRANSPORT/,
    );
    expect(result.stdout).toContain('upstreams failing: down');
    expect(result.stdout).not.toContain('token-local');
  });
});
