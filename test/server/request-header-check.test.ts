/**
 * The request header check on its own (`createRequestHeaderCheck`): which `Host`, `Origin` and body
 * headers pass, the exact 400/403/415 each refusal is, and the CORS headers an allowed origin gets.
 */
import { describe, expect, it } from 'vitest';
import { isTransportError } from '../../src/errors.js';
import {
  createRequestHeaderCheck,
  isJsonMediaType,
  type RequestHeaderCheckOptions,
} from '../../src/server/check-request-headers.js';
import type { InboundRequest } from '../../src/server/types.js';

function request(
  headers: Record<string, string | string[]>,
  options: { method?: string; url?: string; raw?: string[] } = {},
): InboundRequest {
  return {
    method: options.method ?? 'POST',
    url: options.url ?? '/v1/messages',
    headers,
    ...(options.raw === undefined ? {} : { rawHeaders: options.raw }),
    readBody: () => Promise.resolve(new Uint8Array()),
    signal: new AbortController().signal,
  };
}

/** The refusal a check throws, as status, code and message; `undefined` when it passes. */
function refusal(run: () => unknown): { status: number; code: string; message: string } | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (!isTransportError(error)) throw error;
    return { status: error.status, code: error.code, message: error.message };
  }
}

function hostRefusal(options: RequestHeaderCheckOptions, host: string | string[], url?: string) {
  const check = createRequestHeaderCheck(options);
  return refusal(() => check(request({ host }, url === undefined ? {} : { url })));
}

const LOCAL: RequestHeaderCheckOptions = { hasProxyToken: false, listenHost: '127.0.0.1' };

describe('the Host check without a proxy token', () => {
  it.each([
    'localhost',
    'LOCALHOST',
    'localhost.',
    'localhost:8787',
    'app.localhost',
    'app.localhost:80',
    '127.0.0.1',
    '127.8.9.10:8787',
    '[::1]',
    '[::1]:8787',
    '[0:0:0:0:0:0:0:1]',
    '[::ffff:127.0.0.1]:1',
  ])('serves the loopback name %s', (host) => {
    expect(hostRefusal(LOCAL, host)).toBeUndefined();
  });

  it.each([
    'example.com',
    'example.com:8787',
    '128.0.0.1',
    '10.127.0.1',
    '[::2]',
    'notlocalhost',
    '[::ffff:10.0.0.1]',
  ])('refuses the foreign name %s with 400 naming it and the way to accept it', (host) => {
    const bare = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    expect(hostRefusal(LOCAL, host)).toStrictEqual({
      status: 400,
      code: 'MODEL_EINVAL',
      message:
        `this proxy is not served under the name ${JSON.stringify(bare)}: address it as 127.0.0.1 or localhost, ` +
        'or start it with --public-host <name> (TPX_PUBLIC_HOSTS) to accept that name',
    });
  });

  it('serves the address it listens on, whatever its letter case or brackets', () => {
    expect(hostRefusal({ hasProxyToken: false, listenHost: '192.0.2.7' }, '192.0.2.7:9000')).toBeUndefined();
    expect(
      hostRefusal({ hasProxyToken: false, listenHost: '[2001:DB8::1]' }, '[2001:db8::1]:9000'),
    ).toBeUndefined();
    expect(hostRefusal({ hasProxyToken: false, listenHost: 'Box.Example.' }, 'box.example')).toBeUndefined();
    expect(hostRefusal({ hasProxyToken: false, listenHost: '192.0.2.7' }, '192.0.2.8')?.status).toBe(400);
    expect(hostRefusal({ hasProxyToken: false }, '192.0.2.7')?.status).toBe(400);
  });

  it('serves a public host by name for any port, and a public host:port only on that port', () => {
    const options = {
      hasProxyToken: false,
      publicHosts: [' Box.Example ', 'api.example:8443', 'bad host', ''],
    };
    expect(hostRefusal(options, 'box.example')).toBeUndefined();
    expect(hostRefusal(options, 'BOX.example:1234')).toBeUndefined();
    expect(hostRefusal(options, 'api.example:8443')).toBeUndefined();
    expect(hostRefusal(options, 'api.example:8444')?.status).toBe(400);
    expect(hostRefusal(options, 'api.example')?.status).toBe(400);
    expect(hostRefusal(options, 'bad')?.status).toBe(400);
  });

  it('serves any well-formed name when a proxy token is required, and still refuses a malformed one', () => {
    const options = { hasProxyToken: true };
    expect(hostRefusal(options, 'example.com:443')).toBeUndefined();
    expect(hostRefusal(options, 'example.com:99999')?.status).toBe(400);
  });
});

describe('a malformed, missing or repeated Host', () => {
  it.each([
    ['example.com:', 'a colon without a port'],
    ['example.com:65536', 'a port over 65535'],
    ['example.com:123456', 'a port of six digits'],
    ['exa mple.com', 'a space'],
    ['exa/mple', 'a slash'],
    ['[::1', 'an open bracket'],
    ['[example.com]', 'a name in brackets'],
    ['[127.0.0.1]', 'an IPv4 address in brackets'],
    ['::1', 'an IPv6 address without brackets'],
    ['', 'nothing'],
  ])('refuses %j (%s) with 400 quoting it', (host) => {
    expect(hostRefusal(LOCAL, host)).toStrictEqual({
      status: 400,
      code: 'MODEL_EINVAL',
      message: `the Host header is malformed: ${JSON.stringify(host)}`,
    });
  });

  it('accepts the highest port and a name made of every reg-name character', () => {
    expect(hostRefusal({ hasProxyToken: true }, "a-b.c_d~e!f$g&h'i(j)k*l+m,n;o=p%41:65535")).toBeUndefined();
    expect(hostRefusal(LOCAL, ' localhost:0 ')).toBeUndefined();
  });

  it('quotes at most 100 characters of a malformed Host', () => {
    const host = `${'x'.repeat(150)} y`;
    expect(hostRefusal(LOCAL, host)?.message).toBe(
      `the Host header is malformed: ${JSON.stringify(host.slice(0, 100))}`,
    );
  });

  it('refuses a request without Host, and one with two, reading the headers as sent', () => {
    const check = createRequestHeaderCheck(LOCAL);
    expect(refusal(() => check(request({})))).toStrictEqual({
      status: 400,
      code: 'MODEL_EINVAL',
      message: 'the request has no Host header',
    });
    const twice = request({ host: 'localhost' }, { raw: ['Host', 'localhost', 'HOST', 'localhost'] });
    expect(refusal(() => check(twice))).toStrictEqual({
      status: 400,
      code: 'MODEL_EINVAL',
      message: 'the request has more than one Host header',
    });
    expect(refusal(() => check(request({ host: ['localhost', 'localhost'] })))?.message).toBe(
      'the request has more than one Host header',
    );
    // A trailing name without a value in the raw list is not a header line.
    expect(refusal(() => check(request({}, { raw: ['Host', 'localhost', 'Host'] })))).toBeUndefined();
  });

  it('uses the authority of an absolute-form target instead of Host', () => {
    const check = createRequestHeaderCheck(LOCAL);
    expect(refusal(() => check(request({}, { url: 'http://localhost:8787/v1/messages' })))).toBeUndefined();
    expect(
      refusal(() => check(request({ host: 'localhost' }, { url: 'http://example.com/v1/messages' })))
        ?.message,
    ).toContain('"example.com"');
    expect(
      refusal(() =>
        check(request({}, { url: 'http://example.com:/v1/messages', raw: ['Host', 'localhost'] })),
      )?.message,
    ).toBe('the Host header is malformed: "example.com:"');
  });
});

describe('the Origin check', () => {
  const options: RequestHeaderCheckOptions = {
    ...LOCAL,
    allowedOrigins: ['https://App.Example.com/', ' https://other.example '],
  };

  it('passes a request without Origin with no CORS headers', () => {
    expect(createRequestHeaderCheck(options)(request({ host: 'localhost' }))).toStrictEqual({
      corsHeaders: undefined,
      isPreflight: false,
    });
  });

  it('answers an allowed origin with the CORS headers, naming it as the client sent it', () => {
    const check = createRequestHeaderCheck(options);
    expect(check(request({ host: 'localhost', origin: ' https://app.example.COM ' }))).toStrictEqual({
      corsHeaders: {
        'access-control-allow-origin': 'https://app.example.COM',
        vary: 'origin',
        'access-control-expose-headers': 'request-id, retry-after, x-should-retry',
      },
      isPreflight: false,
    });
    expect(check(request({ host: 'localhost', origin: 'https://other.example/' })).corsHeaders).toBeDefined();
  });

  it('refuses any other origin, null and a repeated allowed one with 403 quoting the first', () => {
    const check = createRequestHeaderCheck(options);
    const message = (origin: string) =>
      `requests from web pages of ${JSON.stringify(origin)} are not allowed: ` +
      'start the proxy with --allow-origin <origin> (TPX_ALLOWED_ORIGINS) to allow that origin';
    expect(refusal(() => check(request({ host: 'localhost', origin: 'null' })))).toStrictEqual({
      status: 403,
      code: 'MODEL_EINVAL',
      message: message('null'),
    });
    expect(
      refusal(() => check(request({ host: 'localhost', origin: 'https://app.example.com.evil' })))?.status,
    ).toBe(403);
    const twice = request(
      { host: 'localhost' },
      {
        raw: ['Host', 'localhost', 'Origin', 'https://app.example.com', 'origin', 'https://app.example.com'],
      },
    );
    expect(refusal(() => check(twice))?.message).toBe(message('https://app.example.com'));
    const long = `https://${'a'.repeat(300)}.example`;
    expect(refusal(() => check(request({ host: 'localhost', origin: long })))?.message).toBe(
      message(long.slice(0, 200)),
    );
    expect(
      refusal(() =>
        createRequestHeaderCheck(LOCAL)(request({ host: 'localhost', origin: 'https://app.example.com' })),
      )?.status,
    ).toBe(403);
  });

  it('checks Host before Origin', () => {
    const check = createRequestHeaderCheck(options);
    expect(refusal(() => check(request({ host: 'example.com', origin: 'null' })))?.status).toBe(400);
  });

  it('answers an allowed preflight with the methods, the requested headers and a max age', () => {
    const check = createRequestHeaderCheck(options);
    const preflight = request(
      {},
      {
        method: 'OPTIONS',
        raw: [
          'Host',
          'localhost',
          'Origin',
          'https://app.example.com',
          'Access-Control-Request-Method',
          'POST',
          'Access-Control-Request-Headers',
          'content-type, x-api-key',
          'access-control-request-headers',
          'anthropic-version',
        ],
      },
    );
    expect(check(preflight)).toStrictEqual({
      corsHeaders: {
        'access-control-allow-origin': 'https://app.example.com',
        vary: 'origin',
        'access-control-expose-headers': 'request-id, retry-after, x-should-retry',
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': 'content-type, x-api-key, anthropic-version',
        'access-control-max-age': '600',
      },
      isPreflight: true,
    });
    const withoutHeaders = request(
      { host: 'localhost', origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
      { method: 'OPTIONS' },
    );
    expect(check(withoutHeaders).corsHeaders).toStrictEqual({
      'access-control-allow-origin': 'https://app.example.com',
      vary: 'origin',
      'access-control-expose-headers': 'request-id, retry-after, x-should-retry',
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-max-age': '600',
    });
  });

  it('treats OPTIONS without a requested method, or another method with one, as no preflight', () => {
    const check = createRequestHeaderCheck(options);
    const origin = 'https://app.example.com';
    expect(check(request({ host: 'localhost', origin }, { method: 'OPTIONS' })).isPreflight).toBe(false);
    expect(
      check(
        request({ host: 'localhost', origin, 'access-control-request-method': 'POST' }, { method: 'POST' }),
      ).isPreflight,
    ).toBe(false);
    expect(
      check(request({ host: 'localhost', 'access-control-request-method': 'POST' }, { method: 'OPTIONS' })),
    ).toStrictEqual({ corsHeaders: undefined, isPreflight: false });
  });
});

describe('the body check', () => {
  const { checkBody } = createRequestHeaderCheck(LOCAL);

  it('accepts JSON media types in any case, with parameters, and +json types', () => {
    for (const type of [
      'application/json',
      'Application/JSON; charset=utf-8',
      ' application/json ;x=1',
      'application/vnd.api+json',
    ]) {
      expect(refusal(() => checkBody(request({ 'content-type': type })))).toBeUndefined();
    }
    expect(isJsonMediaType('text/x+json')).toBe(false);
    expect(isJsonMediaType('application/jsonp')).toBe(false);
    expect(isJsonMediaType('application/json+x')).toBe(false);
  });

  it('refuses another type, no type or two types with 415 saying what came', () => {
    const message = (shown: string) =>
      `the request body must be JSON (content-type: application/json), got ${shown}`;
    expect(refusal(() => checkBody(request({ 'content-type': 'text/plain' })))).toStrictEqual({
      status: 415,
      code: 'MODEL_EINVAL',
      message: message('"text/plain"'),
    });
    expect(refusal(() => checkBody(request({})))?.message).toBe(message('no content type'));
    expect(
      refusal(() =>
        checkBody(request({}, { raw: ['Content-Type', 'application/json', 'content-type', 'text/plain'] })),
      )?.message,
    ).toBe(message('"application/json, text/plain"'));
    const long = `text/${'x'.repeat(200)}`;
    expect(refusal(() => checkBody(request({ 'content-type': long })))?.message).toBe(
      message(JSON.stringify(long.slice(0, 100))),
    );
  });

  it('accepts identity and empty content codings and refuses any other, naming it', () => {
    const json = { 'content-type': 'application/json' };
    expect(refusal(() => checkBody(request({ ...json, 'content-encoding': 'identity' })))).toBeUndefined();
    expect(
      refusal(() => checkBody(request({ ...json, 'content-encoding': ' IDENTITY , ' }))),
    ).toBeUndefined();
    expect(
      refusal(() => checkBody(request({ ...json, 'content-encoding': 'identity, GZip' }))),
    ).toStrictEqual({
      status: 415,
      code: 'MODEL_EINVAL',
      message:
        'this proxy does not accept request bodies with content-encoding "gzip": send the JSON uncompressed',
    });
    expect(
      refusal(() =>
        checkBody(
          request(
            {},
            {
              raw: [
                'content-type',
                'application/json',
                'Content-Encoding',
                'identity',
                'content-encoding',
                'br',
              ],
            },
          ),
        ),
      )?.message,
    ).toContain('"br"');
  });
});
