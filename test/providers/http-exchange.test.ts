import { createServer as createNetServer, type Server } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { TransportError } from '../../src/errors.js';
import { classifyError } from '../../src/providers/classify-error.js';
import { createDispatcherPool, outboundProxySettings } from '../../src/providers/dispatcher-pool.js';
import { httpRequest, readBody } from '../../src/providers/http-exchange.js';
import { startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';
import { rejectionOf, testAttempt, type TestAttempt } from './attempt-context.js';

let server: ScriptedServer | undefined;
let attempt: TestAttempt | undefined;
afterEach(async () => {
  await attempt?.close();
  await server?.close();
  attempt = undefined;
  server = undefined;
});

describe('httpRequest', () => {
  it('sends method, path, query and body, asks for identity encoding, and adds hop and observer headers beneath its own', async () => {
    server = await startScriptedServer([step.json({ ok: true }, { headers: { 'x-answer': 'yes' } })]);
    attempt = testAttempt('tpx', {
      upstreamHeaders: { via: 'tpx-proxy', 'x-hop': 'hop' },
      notes: { headers: { traceparent: 'tp-1', 'content-type': 'text/plain', 'x-hop': 'observer' } },
    });
    const response = await httpRequest(
      `${server.url}/v1/chat/completions?a=1`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'x-mine': 'm' }, body: '{"q":1}' },
      attempt.context,
    );
    expect(response.status).toBe(200);
    expect(response.headers['x-answer']).toBe('yes');
    expect(await readBody(response, attempt.context)).toBe('{"ok":true}');
    const seen = server.requests[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/v1/chat/completions?a=1');
    expect(seen.bodyText).toBe('{"q":1}');
    expect(seen.headers).toMatchObject({
      'accept-encoding': 'identity',
      'content-type': 'application/json',
      'x-mine': 'm',
      via: 'tpx-proxy',
      'x-hop': 'hop',
      traceparent: 'tp-1',
    });
  });

  it('lets the caller override accept-encoding', async () => {
    server = await startScriptedServer([step.json({})]);
    attempt = testAttempt('tpx');
    const response = await httpRequest(
      `${server.url}/x`,
      { method: 'GET', headers: { 'accept-encoding': 'gzip' } },
      attempt.context,
    );
    response.body.destroy();
    expect(server.requests[0]!.headers['accept-encoding']).toBe('gzip');
    expect(server.requests[0]!.bodyText).toBe('');
  });

  it('asks for the root path when the URL has none', async () => {
    server = await startScriptedServer([step.json({})]);
    attempt = testAttempt('tpx');
    const response = await httpRequest(server.url, { method: 'GET', headers: {} }, attempt.context);
    await readBody(response, attempt.context);
    expect(server.requests[0]!.url).toBe('/');
  });

  it('joins a repeated response header with a comma', async () => {
    server = await startScriptedServer([
      step.handle(({ response }) => {
        response.setHeader('x-multi', ['a', 'b']);
        response.end('{}');
      }),
    ]);
    attempt = testAttempt('tpx');
    const response = await httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    await readBody(response, attempt.context);
    expect(response.headers['x-multi']).toBe('a, b');
  });

  it('rejects at once with the cancellation reason when the exchange was already cancelled', async () => {
    attempt = testAttempt('tpx');
    const reason = new TransportError('MODEL_ETIMEOUT', 'total deadline', { deadline: 'total' });
    attempt.context.cancellation.abort(reason);
    await expect(
      httpRequest('http://127.0.0.1:1/x', { method: 'GET', headers: {} }, attempt.context),
    ).rejects.toBe(reason);
  });

  it('rejects with MODEL_EABORTED when cancelled by the caller before the answer', async () => {
    server = await startScriptedServer([step.noHeaders()]);
    attempt = testAttempt('anthropic');
    const pending = httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    await server.settled(0, 50).catch(() => undefined);
    attempt.context.cancellation.abort('caller left');
    const error = await rejectionOf(pending);
    expect(error).toMatchObject({
      code: 'MODEL_EABORTED',
      provider: 'anthropic',
      message: 'the exchange was cancelled by the caller',
    });
  });

  it('times out the first byte on its own timer and names the deadline', async () => {
    server = await startScriptedServer([step.noHeaders()]);
    attempt = testAttempt('tpx', { deadlines: { firstByteTimeoutMs: 100 } });
    const error = await rejectionOf(
      httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context),
    );
    expect(error).toMatchObject({
      code: 'MODEL_ETIMEOUT',
      deadline: 'first-byte',
      provider: 'tpx',
      retryable: true,
      message: 'the tpx endpoint sent no response headers within 100 ms (first-byte deadline)',
    });
  });

  it('reports a refused connection naming the address and port', async () => {
    const closed = await freePort();
    attempt = testAttempt('tpx');
    const error = await rejectionOf(
      httpRequest(`http://127.0.0.1:${closed}/v1/x`, { method: 'GET', headers: {} }, attempt.context),
    );
    expect(error).toMatchObject({
      code: 'MODEL_ETRANSPORT',
      retryable: true,
      provider: 'tpx',
      message: `nothing is listening at 127.0.0.1:${closed} (connection refused, ECONNREFUSED): the tpx upstream is not running there, or the base URL names the wrong host or port`,
    });
  });

  it('reports a connection reset before the headers as a retryable network failure', async () => {
    server = await startScriptedServer([step.reset('before-headers')]);
    attempt = testAttempt('anthropic');
    const error = await rejectionOf(
      httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context),
    );
    expect(error).toMatchObject({ code: 'MODEL_ETRANSPORT', retryable: true, provider: 'anthropic' });
    expect((error as Error).message).toMatch(/^network failure talking to the anthropic endpoint: .+/);
  });

  it('refuses an encoding it cannot decode before handing back the answer', async () => {
    server = await startScriptedServer([step.text(200, 'x', { 'content-encoding': 'compress' })]);
    attempt = testAttempt('tpx');
    const error = await rejectionOf(
      httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context),
    );
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'tpx' });
    expect((error as Error).message).toContain('content-encoding "compress"');
  });

  it('decodes a gzip answer, and refuses one that decodes past the response limit', async () => {
    const big = 'y'.repeat(5000);
    server = await startScriptedServer([
      step.handle(({ response }) => {
        response.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('small'));
      }),
      step.handle(({ response }) => {
        response.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(big));
      }),
    ]);
    attempt = testAttempt('tpx', { maxResponseBytes: 4096 });
    const small = await httpRequest(`${server.url}/a`, { method: 'GET', headers: {} }, attempt.context);
    expect(await readBody(small, attempt.context)).toBe('small');
    const large = await httpRequest(`${server.url}/b`, { method: 'GET', headers: {} }, attempt.context);
    const error = await rejectionOf(readBody(large, attempt.context, Number.MAX_SAFE_INTEGER));
    expect(error).toMatchObject({
      code: 'MODEL_ETOOBIG',
      status: 502,
      message: 'the tpx response is larger than the limit of 4096 bytes (maxResponseBytes)',
    });
  });

  it('fails a body that cannot be decoded with MODEL_EPROTO naming the encoding', async () => {
    server = await startScriptedServer([step.text(200, 'not gzip at all', { 'content-encoding': 'gzip' })]);
    attempt = testAttempt('anthropic');
    const response = await httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    const error = await rejectionOf(readBody(response, attempt.context));
    expect(error).toMatchObject({ code: 'MODEL_EPROTO', provider: 'anthropic' });
    expect((error as Error).message).toMatch(/^the anthropic response body could not be decoded as gzip: /);
  });
});

describe('httpRequest in detail', () => {
  it('waits for the headers as long as it takes when the first-byte deadline is 0 (none)', async () => {
    server = await startScriptedServer([
      step.handle(async ({ response }) => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"late":true}');
      }),
    ]);
    attempt = testAttempt('tpx', { deadlines: { firstByteTimeoutMs: 0 } });
    const response = await httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    expect(await readBody(response, attempt.context)).toBe('{"late":true}');
  });

  it('reads a body with pauses as long as it takes when the idle deadline is 0 (none)', async () => {
    server = await startScriptedServer([step.sse(['{"a":', '1}'], { frameDelayMs: [0, 150] })]);
    attempt = testAttempt('tpx', { deadlines: { idleTimeoutMs: 0 } });
    const response = await httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    expect(await readBody(response, attempt.context)).toBe('{"a":1}');
  });

  it('rejects with the cancellation when cancelled before a connection was made, and sends nothing', async () => {
    server = await startScriptedServer([step.json({})]);
    attempt = testAttempt('tpx');
    const reason = new TransportError('MODEL_ETIMEOUT', 'total deadline', { deadline: 'total' });
    const pending = httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    attempt.context.cancellation.abort(reason);
    expect(await rejectionOf(pending)).toBe(reason);
    const byCaller = testAttempt('anthropic');
    try {
      const second = httpRequest(`${server.url}/y`, { method: 'GET', headers: {} }, byCaller.context);
      byCaller.context.cancellation.abort('caller left');
      expect(await rejectionOf(second)).toMatchObject({
        code: 'MODEL_EABORTED',
        provider: 'anthropic',
        message: 'the exchange was cancelled by the caller',
      });
    } finally {
      await byCaller.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.requests).toHaveLength(0);
  });

  it('decodes an answer encoded twice, in the order the codings were applied', async () => {
    server = await startScriptedServer([
      step.handle(({ response }) => {
        response.writeHead(200, { 'content-encoding': 'gzip, deflate' }).end(deflateSync(gzipSync('twice')));
      }),
    ]);
    attempt = testAttempt('tpx');
    const response = await httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    expect(await readBody(response, attempt.context)).toBe('twice');
  });

  it('decodes an answer to exactly the response limit', async () => {
    server = await startScriptedServer([
      step.handle(({ response }) => {
        response.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('z'.repeat(4096)));
      }),
    ]);
    attempt = testAttempt('tpx', { maxResponseBytes: 4096 });
    const response = await httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    expect(await readBody(response, attempt.context, Number.MAX_SAFE_INTEGER)).toBe('z'.repeat(4096));
  });

  it('decodes a large compressed answer read slowly, chunk by chunk, whole', async () => {
    const text = Array.from({ length: 40_000 }, (_, index) => `line ${index}`).join('\n');
    server = await startScriptedServer([
      step.handle(({ response }) => {
        response.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(text));
      }),
    ]);
    attempt = testAttempt('tpx', { maxResponseBytes: 10 * 1024 * 1024 });
    const response = await httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    // Nothing is read for a while, so the decoded bytes pile up past the body's high-water mark and the
    // decoder is paused; each read must let it go on.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const chunks: Buffer[] = [];
    for (;;) {
      const chunk = await response.body.read();
      if (chunk === null) break;
      chunks.push(chunk);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(Buffer.concat(chunks).toString('utf8')).toBe(text);
  });
});

describe('readBody', () => {
  it('refuses a body whose declared length is over the limit before reading it', async () => {
    server = await startScriptedServer([
      step.handle(({ response }) => {
        response.writeHead(200, { 'content-length': '100' }).end('x'.repeat(100));
      }),
    ]);
    attempt = testAttempt('anthropic');
    const response = await httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    expect(response.headers['content-length']).toBe('100');
    const error = await rejectionOf(readBody(response, attempt.context, 99));
    expect(error).toMatchObject({
      code: 'MODEL_ETOOBIG',
      message: 'the anthropic response is larger than the limit of 99 bytes (maxResponseBytes)',
    });
    expect(response.body.destroyed).toBe(true);
  });

  it('reads a body of exactly the limit, and refuses one byte more arriving without a length', async () => {
    server = await startScriptedServer([
      step.text(200, 'x'.repeat(100), { 'content-type': 'text/plain' }),
      step.sse(['x'.repeat(60), 'x'.repeat(41)], { frameDelayMs: 5 }),
    ]);
    attempt = testAttempt('tpx');
    const exact = await httpRequest(`${server.url}/a`, { method: 'GET', headers: {} }, attempt.context);
    expect(await readBody(exact, attempt.context, 100)).toBe('x'.repeat(100));
    const over = await httpRequest(`${server.url}/b`, { method: 'GET', headers: {} }, attempt.context);
    expect(over.headers['content-length']).toBeUndefined();
    const error = await rejectionOf(readBody(over, attempt.context, 100));
    expect(error).toMatchObject({ code: 'MODEL_ETOOBIG' });
    expect(over.body.destroyed).toBe(true);
  });

  it('drops a leading byte order mark and joins the chunks of a body', async () => {
    server = await startScriptedServer([step.sse(['\uFEFF{"a":', '1}'], { frameDelayMs: 5 })]);
    attempt = testAttempt('tpx');
    const response = await httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    expect(await readBody(response, attempt.context)).toBe('{"a":1}');
  });

  it('times out a body that goes silent, naming the idle deadline', async () => {
    server = await startScriptedServer([step.hangAfterHeaders()]);
    attempt = testAttempt('anthropic', { deadlines: { idleTimeoutMs: 100 } });
    const response = await httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    const error = await rejectionOf(readBody(response, attempt.context));
    expect(error).toMatchObject({
      code: 'MODEL_ETIMEOUT',
      deadline: 'idle',
      message: 'the anthropic endpoint went silent for 100 ms mid-response (idle deadline)',
    });
  });

  it('reports a body cut short of its content-length as a retryable network failure', async () => {
    server = await startScriptedServer([step.lyingLength(50, 'short', { headers: {} })]);
    attempt = testAttempt('tpx');
    const response = await httpRequest(`${server.url}/x`, { method: 'GET', headers: {} }, attempt.context);
    const error = await rejectionOf(readBody(response, attempt.context));
    expect(error).toMatchObject({ code: 'MODEL_ETRANSPORT', retryable: true, provider: 'tpx' });
  });
});

describe('classifyError', () => {
  const context = () => testAttempt('tpx').context;

  it('hands back a TransportError as it is', () => {
    const error = new TransportError('MODEL_EINVAL', 'bad');
    expect(classifyError(error, context())).toBe(error);
  });

  it('gives the cancellation reason when it is a TransportError, MODEL_EABORTED otherwise', () => {
    const cancelled = context();
    const reason = new TransportError('MODEL_ETIMEOUT', 'total', { deadline: 'total' });
    cancelled.cancellation.abort(reason);
    expect(classifyError(new Error('socket closed'), cancelled)).toBe(reason);
    const byCaller = context();
    byCaller.cancellation.abort('gone');
    const cause = new Error('socket closed');
    const aborted = classifyError(cause, byCaller);
    expect(aborted).toMatchObject({ code: 'MODEL_EABORTED', provider: 'tpx', cause });
  });

  it('reports a body that did not match its content-length as a retryable protocol error', () => {
    const cause = Object.assign(new Error('mismatch'), { code: 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' });
    expect(classifyError(cause, context())).toMatchObject({
      code: 'MODEL_EPROTO',
      status: 502,
      retryable: true,
      provider: 'tpx',
      cause,
      message: 'the tpx response body did not match its content-length',
    });
  });

  it('names each undici deadline by its error code', () => {
    const deadlines = {
      UND_ERR_CONNECT_TIMEOUT: [
        'connect',
        'could not connect to the tpx endpoint within 10000 ms (connect deadline)',
      ],
      UND_ERR_HEADERS_TIMEOUT: [
        'first-byte',
        'the tpx endpoint sent no response headers within 15000 ms (first-byte deadline)',
      ],
      UND_ERR_BODY_TIMEOUT: [
        'idle',
        'the tpx endpoint went silent for 15000 ms mid-response (idle deadline)',
      ],
    } as const;
    for (const [code, [deadline, message]] of Object.entries(deadlines)) {
      const cause = Object.assign(new Error('timeout'), { code });
      expect(classifyError(cause, context())).toMatchObject({
        code: 'MODEL_ETIMEOUT',
        deadline,
        message,
        provider: 'tpx',
        cause,
      });
    }
  });

  it('reports an aggregate connect failure refused on every address, naming the first (IPv6 in brackets)', () => {
    const refused = (address: string, port?: number) =>
      Object.assign(new Error('refused'), { code: 'ECONNREFUSED', address, port });
    const aggregate = Object.assign(new Error(''), {
      errors: [refused('::1', 8080), refused('127.0.0.1', 8080)],
    });
    expect(classifyError(aggregate, context()).message).toBe(
      'nothing is listening at [::1]:8080 (connection refused, ECONNREFUSED): the tpx upstream is not running there, or the base URL names the wrong host or port',
    );
    expect(classifyError(refused('10.0.0.1'), context()).message).toMatch(
      /^nothing is listening at 10\.0\.0\.1 \(/,
    );
    const noAddress = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    expect(classifyError(noAddress, context()).message).toMatch(
      /^nothing is listening at the upstream address \(/,
    );
  });

  it('treats an aggregate with any address not refused, or with none, as a plain network failure', () => {
    const mixed = Object.assign(new Error('all failed'), {
      errors: [
        Object.assign(new Error('refused'), { code: 'ECONNREFUSED', address: '::1', port: 1 }),
        Object.assign(new Error('unreachable'), { code: 'ENETUNREACH' }),
      ],
    });
    expect(classifyError(mixed, context())).toMatchObject({
      code: 'MODEL_ETRANSPORT',
      message: 'network failure talking to the tpx endpoint: all failed',
    });
    const empty = Object.assign(new Error('nothing tried'), { errors: [] });
    expect(classifyError(empty, context()).message).toBe(
      'network failure talking to the tpx endpoint: nothing tried',
    );
  });

  it('quotes the message and a string code of a network failure, and a non-Error as text', () => {
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    expect(classifyError(reset, context())).toMatchObject({
      code: 'MODEL_ETRANSPORT',
      status: 502,
      retryable: true,
      message: 'network failure talking to the tpx endpoint: other side closed (UND_ERR_SOCKET)',
    });
    const numeric = Object.assign(new Error('odd'), { code: 42 });
    expect(classifyError(numeric, context()).message).toBe(
      'network failure talking to the tpx endpoint: odd',
    );
    expect(classifyError('plain text', context()).message).toBe(
      'network failure talking to the tpx endpoint: plain text',
    );
    expect(classifyError(null, context()).message).toBe('network failure talking to the tpx endpoint: null');
  });
});

describe('outboundProxySettings', () => {
  it('gives nothing when no proxy is named', () => {
    expect(outboundProxySettings({})).toBeUndefined();
    expect(outboundProxySettings({ HTTP_PROXY: '  ', NO_PROXY: 'localhost' })).toBeUndefined();
  });

  it('reads lower-case names first, trims values, and defaults the rest to empty', () => {
    expect(
      outboundProxySettings({
        https_proxy: ' http://lower:3128 ',
        HTTPS_PROXY: 'http://upper:3128',
        NO_PROXY: ' localhost ',
      }),
    ).toStrictEqual({ httpProxy: '', httpsProxy: 'http://lower:3128', noProxy: 'localhost' });
    expect(outboundProxySettings({ HTTP_PROXY: 'http://p:1' })).toStrictEqual({
      httpProxy: 'http://p:1',
      httpsProxy: '',
      noProxy: '',
    });
  });
});

describe('createDispatcherPool', () => {
  it('keeps one dispatcher per connect deadline and closes them all', async () => {
    const pool = createDispatcherPool();
    const first = pool.get(1000);
    expect(pool.get(1000)).toBe(first);
    expect(pool.get(2000)).not.toBe(first);
    await pool.close();
    expect((first as unknown as { closed: boolean }).closed).toBe(true);
    expect(pool.get(1000)).not.toBe(first);
    await pool.close();
  });

  it('routes through the named outbound proxy, and past it for NO_PROXY hosts', async () => {
    const firstLines: string[] = [];
    const proxy = createNetServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        firstLines.push(chunk.toString('latin1').split('\r\n', 1)[0]!);
        socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    server = await startScriptedServer([step.json({ direct: true })]);
    const { port } = proxy.address() as { port: number };
    const pool = createDispatcherPool({ HTTP_PROXY: `http://127.0.0.1:${port}`, NO_PROXY: '127.0.0.1' });
    attempt = testAttempt('tpx', { dispatcher: (ms) => pool.get(ms) });
    try {
      const error = await rejectionOf(
        httpRequest(
          'http://upstream.invalid:8080/v1/models',
          { method: 'GET', headers: {} },
          attempt.context,
        ),
      );
      expect(error).toMatchObject({ code: 'MODEL_ETRANSPORT' });
      expect((error as Error).message).toContain('(403)');
      expect(firstLines).toStrictEqual(['CONNECT upstream.invalid:8080 HTTP/1.1']);
      const direct = await httpRequest(
        `${server.url}/v1/models`,
        { method: 'GET', headers: {} },
        attempt.context,
      );
      expect(await readBody(direct, attempt.context)).toBe('{"direct":true}');
      expect(firstLines).toHaveLength(1);
    } finally {
      await pool.close();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });
});

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function freePort(): Promise<number> {
  const probe: Server = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
