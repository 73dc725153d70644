/**
 * Web pages cannot drive the proxy: a cross-site "simple" request (no CORS preflight) is refused for its
 * `Origin` and for a body that is not JSON, a DNS-rebinding page is refused for its `Host`, and a
 * missing, repeated or malformed `Host` is a 400 — each answered in the Messages error shape, with
 * nothing sent upstream. Absolute-form request targets are served like origin-form ones.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransport, type ModelTransport } from '../../src/index.js';
import { startServer, type RunningServer, type ServeOptions } from '../../src/server/start-server.js';
import { startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';

const HELLO = JSON.stringify({
  model: 'claude-test',
  max_tokens: 16,
  messages: [{ role: 'user', content: 'Hello' }],
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends raw bytes to the proxy (`Connection: close` is the caller's) and reads until it closes. */
function rawExchange(port: number, bytes: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(bytes);
  });
}

/** A POST of the hello request with the given extra header lines (each `Name: value`). */
function postWith(lines: readonly string[], target = '/v1/messages', body = HELLO): string {
  return [
    `POST ${target} HTTP/1.1`,
    ...lines,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

function errorType(answer: RawAnswer): string | undefined {
  return (JSON.parse(answer.body) as { error?: { type?: string } }).error?.type;
}

let upstream: ScriptedServer;
let transport: ModelTransport;

beforeAll(async () => {
  upstream = await startScriptedServer(() =>
    step.json({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    }),
  );
  transport = createTransport({
    env: {},
    maxRetries: 0,
    anthropicApiKey: 'sk-ant-browser-key',
    anthropicBaseUrl: upstream.url,
  });
});

afterAll(async () => {
  await transport.close();
  await upstream.close();
});

async function withProxy(
  options: Omit<ServeOptions, 'transport'>,
  run: (server: RunningServer) => Promise<void>,
): Promise<void> {
  const server = await startServer({ transport, port: 0, logger: false, ...options });
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

/** Runs `send` and checks that the upstream was not called meanwhile. */
async function refusedBeforeUpstream(send: () => Promise<RawAnswer>): Promise<RawAnswer> {
  const before = upstream.requests.length;
  const answer = await send();
  expect(upstream.requests.length, 'nothing may reach the upstream').toBe(before);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(answer.body)).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
  return answer;
}

describe('cross-site requests without a preflight', () => {
  it('refuses a text/plain POST (a form or fetch from another site) with 415 and sends nothing', async () => {
    await withProxy({}, async (server) => {
      const host = `Host: 127.0.0.1:${server.port}`;
      for (const type of [
        'text/plain',
        'text/plain;charset=UTF-8',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ]) {
        const answer = await refusedBeforeUpstream(() =>
          rawExchange(server.port, postWith([host, `Content-Type: ${type}`])),
        );
        expect(answer.status, type).toBe(415);
        expect(errorType(answer)).toBe('invalid_request_error');
        expect(JSON.parse(answer.body).error.message).toMatch(/must be JSON/);
      }
      // A Blob body without a type is sent by browsers with no Content-Type at all.
      const untyped = await refusedBeforeUpstream(() => rawExchange(server.port, postWith([host])));
      expect(untyped.status).toBe(415);
    });
  });

  it('accepts JSON media types whatever their case and parameters', async () => {
    await withProxy({}, async (server) => {
      for (const type of [
        'Application/JSON',
        'application/json; charset=UTF-8',
        'application/vnd.api+json',
      ]) {
        const answer = await rawExchange(
          server.port,
          postWith([`Host: localhost:${server.port}`, `Content-Type: ${type}`]),
        );
        expect(answer.status, type).toBe(200);
      }
    });
  });

  it('answers 403 to a request carrying an Origin that is not allowed, null included', async () => {
    await withProxy({}, async (server) => {
      for (const origin of ['https://evil.example', 'null', `http://127.0.0.1:${server.port}`]) {
        const answer = await refusedBeforeUpstream(() =>
          rawExchange(
            server.port,
            postWith([
              `Host: 127.0.0.1:${server.port}`,
              'Content-Type: application/json',
              `Origin: ${origin}`,
            ]),
          ),
        );
        expect(answer.status, origin).toBe(403);
        expect(errorType(answer)).toBe('permission_error');
        expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      }
    });
  });

  it('serves an allowed origin with CORS headers and answers its preflight; other origins stay refused', async () => {
    await withProxy({ allowedOrigins: ['https://app.example'] }, async (server) => {
      const host = `Host: 127.0.0.1:${server.port}`;
      const preflight = await rawExchange(
        server.port,
        [
          'OPTIONS /v1/messages HTTP/1.1',
          host,
          'Origin: https://app.example',
          'Access-Control-Request-Method: POST',
          'Access-Control-Request-Headers: content-type, x-api-key, anthropic-version',
          'Connection: close',
          '',
          '',
        ].join('\r\n'),
      );
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(preflight.headers['access-control-allow-methods']).toContain('POST');
      expect(preflight.headers['access-control-allow-headers']).toContain('x-api-key');

      const allowed = await rawExchange(
        server.port,
        postWith([host, 'Content-Type: application/json', 'Origin: https://app.example']),
      );
      expect(allowed.status).toBe(200);
      expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example');

      const other = await refusedBeforeUpstream(() =>
        rawExchange(
          server.port,
          postWith([host, 'Content-Type: application/json', 'Origin: https://evil.example']),
        ),
      );
      expect(other.status).toBe(403);
    });
  });

  it('refuses a compressed request body with 415 naming the encoding', async () => {
    await withProxy({}, async (server) => {
      for (const encoding of ['gzip', 'br', 'deflate', 'zstd', 'identity, gzip']) {
        const answer = await refusedBeforeUpstream(() =>
          rawExchange(
            server.port,
            postWith([
              `Host: 127.0.0.1:${server.port}`,
              'Content-Type: application/json',
              `Content-Encoding: ${encoding}`,
            ]),
          ),
        );
        expect(answer.status, encoding).toBe(415);
        expect(JSON.parse(answer.body).error.message).toContain(encoding.split(', ').at(-1));
      }
      const identity = await rawExchange(
        server.port,
        postWith([
          `Host: 127.0.0.1:${server.port}`,
          'Content-Type: application/json',
          'Content-Encoding: identity',
        ]),
      );
      expect(identity.status).toBe(200);
    });
  });
});

describe('the Host header (DNS rebinding)', () => {
  it('refuses a foreign name with 400 on every route, /healthz included, and serves loopback names', async () => {
    await withProxy({}, async (server) => {
      for (const name of ['evil.example', 'attacker.example.com', '10.0.0.5', 'localhost.evil.example']) {
        const post = await refusedBeforeUpstream(() =>
          rawExchange(
            server.port,
            postWith([`Host: ${name}:${server.port}`, 'Content-Type: application/json']),
          ),
        );
        expect(post.status, name).toBe(400);
        expect(JSON.parse(post.body).error.message).toMatch(/--public-host/);
        const health = await rawExchange(
          server.port,
          `GET /healthz HTTP/1.1\r\nHost: ${name}\r\nConnection: close\r\n\r\n`,
        );
        expect(health.status, name).toBe(400);
      }
      for (const name of [
        `127.0.0.1:${server.port}`,
        `localhost:${server.port}`,
        'LOCALHOST',
        '[::1]:1',
        '127.1.2.3',
      ]) {
        const answer = await rawExchange(
          server.port,
          postWith([`Host: ${name}`, 'Content-Type: application/json']),
        );
        expect(answer.status, name).toBe(200);
      }
    });
  });

  it('serves a configured public host, with or without its port', async () => {
    await withProxy({ publicHosts: ['proxy.team.internal'] }, async (server) => {
      for (const name of [
        'proxy.team.internal',
        `proxy.team.internal:${server.port}`,
        'Proxy.Team.Internal.',
      ]) {
        const answer = await rawExchange(
          server.port,
          postWith([`Host: ${name}`, 'Content-Type: application/json']),
        );
        expect(answer.status, name).toBe(200);
      }
      const other = await rawExchange(
        server.port,
        postWith(['Host: other.internal', 'Content-Type: application/json']),
      );
      expect(other.status).toBe(400);
    });
  });

  it('answers 400 in the Messages shape to a missing, repeated or malformed Host', async () => {
    await withProxy({}, async (server) => {
      const cases: [string, string[]][] = [
        ['missing', []],
        ['repeated', ['Host: 127.0.0.1', 'Host: 127.0.0.1']],
        ['repeated, different', ['Host: 127.0.0.1', 'Host: evil.example']],
        ['empty', ['Host: ']],
        ['port out of range', ['Host: 127.0.0.1:99999']],
        ['bad characters', ['Host: 127.0.0.1/evil']],
        ['bad IPv6 literal', ['Host: [::zz]:80']],
        ['user info', ['Host: user@127.0.0.1']],
      ];
      for (const [label, lines] of cases) {
        const answer = await refusedBeforeUpstream(() =>
          rawExchange(server.port, postWith([...lines, 'Content-Type: application/json'])),
        );
        expect(answer.status, label).toBe(400);
        expect(errorType(answer), label).toBe('invalid_request_error');
      }
    });
  });

  it("answers an HTTP/1.0 health check without Host (HAProxy's default httpchk) as /readyz does, and nothing else without Host", async () => {
    await withProxy({ proxyToken: 'team-token-0123456789' }, async (server) => {
      for (const target of ['/healthz', '/readyz']) {
        for (const method of ['GET', 'HEAD']) {
          const answer = await rawExchange(server.port, `${method} ${target} HTTP/1.0\r\n\r\n`);
          expect(answer.status, `${method} ${target}`).toBe(200);
        }
      }
      const health = await rawExchange(server.port, 'GET /healthz HTTP/1.0\r\n\r\n');
      expect(JSON.parse(health.body)).toMatchObject({ ok: true, provider: transport.provider });
      // Only the liveness probe: a Messages request needs its Host (and its token) as before.
      const post = await refusedBeforeUpstream(() =>
        rawExchange(
          server.port,
          postWith(['Content-Type: application/json', 'x-api-key: team-token-0123456789']).replace(
            'HTTP/1.1',
            'HTTP/1.0',
          ),
        ),
      );
      expect(post.status).toBe(400);
      expect(JSON.parse(post.body).error.message).toBe('the request has no Host header');
    });
  });

  it('with a proxy token, serves any well-formed name (the token keeps pages out)', async () => {
    await withProxy({ proxyToken: 'team-token-0123456789' }, async (server) => {
      const answer = await rawExchange(
        server.port,
        postWith([
          'Host: proxy.example.org',
          'Content-Type: application/json',
          'x-api-key: team-token-0123456789',
        ]),
      );
      expect(answer.status).toBe(200);
      const malformed = await rawExchange(
        server.port,
        postWith(['Host: a b', 'Content-Type: application/json', 'x-api-key: team-token-0123456789']),
      );
      expect(malformed.status).toBe(400);
    });
  });
});

describe('absolute-form request targets', () => {
  it('serves them like origin-form ones, and checks their authority instead of Host', async () => {
    await withProxy({}, async (server) => {
      const origin = `http://127.0.0.1:${server.port}`;
      const served = await rawExchange(
        server.port,
        postWith(
          [`Host: 127.0.0.1:${server.port}`, 'Content-Type: application/json'],
          `${origin}/v1/messages`,
        ),
      );
      expect(served.status).toBe(200);
      expect(JSON.parse(served.body)).toMatchObject({ type: 'message' });
      const withQuery = await rawExchange(
        server.port,
        postWith(['Host: 127.0.0.1', 'Content-Type: application/json'], `${origin}/v1/messages?beta=true`),
      );
      expect(withQuery.status).toBe(200);
      const health = await rawExchange(
        server.port,
        `GET ${origin}/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      expect(health.status).toBe(200);
      const foreign = await refusedBeforeUpstream(() =>
        rawExchange(
          server.port,
          postWith(
            [`Host: 127.0.0.1:${server.port}`, 'Content-Type: application/json'],
            'http://evil.example/v1/messages',
          ),
        ),
      );
      expect(foreign.status).toBe(400);
    });
  });
});
