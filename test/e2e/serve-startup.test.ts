/**
 * `tpx serve` as a process: what its banner says (upstream, dialect, mapping, cap, token source, inbound
 * auth, ignored settings), its start-up probe (a warning with the fix, never a refusal), the refusal to
 * forward to itself, the quiet answer to Claude Code's probes, and outbound requests through a forward
 * proxy named by HTTP_PROXY (and around it with NO_PROXY).
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import { spawn } from 'node:child_process';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { CLI, runTpx, startTpxServe } from './cli-process.js';

/** A forward proxy on loopback that tunnels CONNECT requests and records their targets. */
async function startForwardProxy(): Promise<{ url: string; targets: string[]; close(): Promise<void> }> {
  const targets: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((_request, response) => {
    response.writeHead(405).end();
  });
  server.on('connect', (request, client: Socket) => {
    targets.push(request.url ?? '');
    const [host, port] = (request.url ?? '').split(':');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client).pipe(upstream);
    });
    sockets.add(client).add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    targets,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function head(url: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}${path}`, { method: 'HEAD' }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end();
  });
}

async function postMessage(
  url: string,
  model = 'claude-sonnet-4-5',
): Promise<{ status: number; body: string }> {
  const response = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'unused' },
    body: JSON.stringify({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, body: await response.text() };
}

describe('tpx serve at start', () => {
  let mock: MockModelServer;
  beforeAll(async () => {
    mock = await startMockModel({});
  });
  afterAll(async () => {
    await mock.close();
  });

  it('shows where requests go and how, from flags equal to the variables, and answers through the mapping', async () => {
    const serve = await startTpxServe(
      [
        '--base-url',
        mock.url,
        '--token',
        'local',
        '--model-map',
        '*haiku*=tpx-mock-1,*=tpx-mock-1',
        '--max-tokens',
        '4000',
      ],
      {},
    );
    try {
      const banner = serve.stderr();
      expect(banner).toContain(`upstream: ${mock.url}`);
      expect(banner).toContain('dialect: openai-generic');
      expect(banner).toContain('token: from TPX_OAUTH_TOKEN (static)');
      expect(banner).toContain('models: *haiku*=tpx-mock-1, *=tpx-mock-1;');
      expect(banner).toContain('max_tokens: at most 4000 (TPX_MAX_TOKENS)');
      expect(banner).toContain('inbound auth: none');
      expect(banner).toContain('upstream models: tpx-mock-1');
      expect(banner).toContain(`ANTHROPIC_BASE_URL=${serve.url} ANTHROPIC_AUTH_TOKEN=unused claude`);
      expect(banner).not.toContain('export ');
      const answer = await postMessage(serve.url);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ model: 'claude-sonnet-4-5' });
      // Claude Code's start-up probes get a quiet 200: no error line in the log.
      expect(await head(serve.url, '/')).toBe(200);
      expect(await head(serve.url, '/api/hello')).toBe(200);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    const logLines = serve
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const exchange = logLines.find((line) => line['msg'] === 'exchange' && line['path'] === '/v1/messages')!;
    expect(exchange).toMatchObject({ model: 'claude-sonnet-4-5', upstreamModel: 'tpx-mock-1' });
    expect(logLines.filter((line) => line['path'] === '/' || line['path'] === '/api/hello')).toEqual([]);
  });

  it('names the TPX_* settings that ANTHROPIC_API_KEY made irrelevant, never the key', async () => {
    const serve = await startTpxServe([], {
      ANTHROPIC_API_KEY: 'sk-ant-banner-secret-91',
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${await freePort()}`,
      TPX_BASE_URL: mock.url,
      TPX_OAUTH_TOKEN: 'local',
      TPX_MODEL: 'tpx-mock-1',
    });
    try {
      expect(serve.stderr()).toContain('provider: anthropic (ANTHROPIC_API_KEY is set)');
      expect(serve.stderr()).toContain(
        'note: TPX_BASE_URL, TPX_OAUTH_TOKEN, TPX_MODEL ignored: ANTHROPIC_API_KEY is set',
      );
      expect(serve.stderr()).not.toContain('sk-ant-banner-secret-91');
    } finally {
      await serve.stop();
    }
  });

  it('starts with a warning and the fix when the upstream port is closed, and serves once asked', async () => {
    const port = await freePort();
    const serve = await startTpxServe([], {
      TPX_BASE_URL: `http://127.0.0.1:${port}/v1`,
      TPX_OAUTH_TOKEN: 'local',
    });
    try {
      expect(serve.stderr()).toContain(
        `warning: the upstream did not answer the start-up check: nothing is listening at 127.0.0.1:${port}`,
      );
      expect(serve.stderr()).toContain('fix: start the model server');
      const health = await fetch(`${serve.url}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      await serve.stop();
    }
  });

  it('drains and exits 0 on SIGTERM sent while the start-up probe still waits on a silent upstream', async () => {
    // Accepts connections and never answers, so the probe runs to its own time limit.
    const held = new Set<Socket>();
    const silent = createNetServer((socket) => {
      held.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const upstreamPort = (silent.address() as AddressInfo).port;
    const port = await freePort();
    const child = spawn(process.execPath, [CLI, 'serve', '--port', String(port)], {
      env: {
        PATH: process.env['PATH'] ?? '',
        TPX_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
        TPX_OAUTH_TOKEN: 'local',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      for (let attempt = 0; ; attempt += 1) {
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (response) => response.status === 200,
          () => false,
        );
        if (ready) break;
        if (attempt > 400) throw new Error(`tpx serve never became ready: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(stderr).not.toContain('start-up check');
      child.kill('SIGTERM');
      expect(await exited).toEqual({ code: 0, signal: null });
      expect(stderr).toContain('tpx serve: shutting down');
    } finally {
      child.kill('SIGKILL');
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('starts with a warning when there are no credentials at all', async () => {
    const serve = await startTpxServe([], {});
    try {
      expect(serve.stderr()).toContain(
        'warning: no upstream credentials, so every request will be answered 401.',
      );
      expect(serve.stderr()).toContain('--token local');
    } finally {
      await serve.stop();
    }
  });

  it('warns about an HTML upstream at start instead of staying silent', async () => {
    const page = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html></html>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const serve = await startTpxServe([], {
      TPX_BASE_URL: `http://127.0.0.1:${(page.address() as AddressInfo).port}/v1`,
      TPX_OAUTH_TOKEN: 'local',
    });
    try {
      expect(serve.stderr()).toContain('answered with an HTML page');
      expect(serve.stderr()).toContain('that is a web app');
    } finally {
      await serve.stop();
      await new Promise<void>((resolve) => page.close(() => resolve()));
    }
  });

  it('refuses to start when the exported client settings point the proxy at itself', async () => {
    const port = await freePort();
    const result = await runTpx(['serve', '--port', String(port)], {
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
      ANTHROPIC_API_KEY: 'anything',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `ANTHROPIC_BASE_URL (http://127.0.0.1:${port}) is this proxy's own address`,
    );
    expect(result.stderr).toContain('unset ANTHROPIC_BASE_URL ANTHROPIC_API_KEY');
  });

  it('refuses a duration flag it cannot read, naming the flag', async () => {
    const result = await runTpx(['serve', '--timeout', 'soon'], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--timeout must be a duration such as 600 (seconds), 30s, 500ms or 10m, got "soon"',
    );
    expect(result.stderr).not.toContain('timeoutMs');
  });
});

describe('outbound proxy', () => {
  let mock: MockModelServer;
  beforeAll(async () => {
    mock = await startMockModel({});
  });
  afterAll(async () => {
    await mock.close();
  });

  it('sends upstream requests through HTTP_PROXY, and around it for hosts in NO_PROXY', async () => {
    const proxy = await startForwardProxy();
    const target = new URL(mock.url).host;
    try {
      const through = await startTpxServe([], {
        TPX_BASE_URL: mock.url,
        TPX_OAUTH_TOKEN: 'local',
        HTTP_PROXY: proxy.url,
      });
      try {
        expect((await postMessage(through.url)).status).toBe(200);
      } finally {
        await through.stop();
      }
      expect(proxy.targets.length).toBeGreaterThan(0);
      expect(new Set(proxy.targets)).toEqual(new Set([target]));
      const seen = proxy.targets.length;
      const around = await startTpxServe([], {
        TPX_BASE_URL: mock.url,
        TPX_OAUTH_TOKEN: 'local',
        HTTP_PROXY: proxy.url,
        NO_PROXY: '127.0.0.1',
      });
      try {
        expect((await postMessage(around.url)).status).toBe(200);
      } finally {
        await around.stop();
      }
      expect(proxy.targets.length).toBe(seen);
    } finally {
      await proxy.close();
    }
  });
});
