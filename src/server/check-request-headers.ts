/**
 * What the proxy checks in a request's headers before it reads the body or spends a credential: that
 * the request is addressed to this proxy, comes from no web page that was not allowed, and carries JSON.
 *
 * Without a proxy token, anything that can reach `127.0.0.1` could use the proxy's credentials; two
 * kinds of web page can reach it from a browser:
 *
 * - a page on another site sends a "simple" cross-site `POST` (`Content-Type: text/plain`, or a body
 *   with no type), which a browser sends without a CORS preflight. It carries an `Origin` header and a
 *   body type that is not JSON: both are refused (403 and 415, the latter as Anthropic answers it).
 * - a page whose own name was re-pointed at `127.0.0.1` (DNS rebinding) is same-origin with the proxy as
 *   far as the browser knows, so it can also read the answer. Its requests carry that foreign name in
 *   `Host`: only loopback names and addresses, the address the proxy listens on, and the configured
 *   public hosts are accepted (400 otherwise).
 *
 * With a proxy token the token is what keeps pages out (a page cannot know it), so any well-formed
 * `Host` is served; `Origin` and the body type are checked the same way. A missing, repeated or
 * malformed `Host` is a 400 in every case (RFC 9112 §3.2), with one exception: an HTTP/1.0 liveness
 * probe (`GET`/`HEAD /healthz`) without `Host`, which is what a load balancer's health check sends by
 * default (HAProxy's `option httpchk`), is served, as `/readyz` is.
 *
 * @module
 */
import { isIP } from 'node:net';
import { proxyError } from './error-response.js';
import { parseRequestTarget } from './request-target.js';
import type { InboundRequest } from './types.js';

/** Options of {@link createRequestHeaderCheck}. */
export interface RequestHeaderCheckOptions {
  /**
   * Origins (`https://app.example.com`) whose pages may call the proxy from a browser. A request with
   * any other `Origin` gets 403. @default none
   */
  allowedOrigins?: readonly string[];
  /**
   * Host names (or `name:port`) besides the loopback ones that clients may address the proxy by, e.g.
   * the name of the machine when it listens on every interface. @default none
   */
  publicHosts?: readonly string[];
  /** The address the proxy listens on: a client addressing it by that address is served. */
  listenHost?: string;
  /** Whether clients must present a proxy token (then any well-formed `Host` is served). */
  hasProxyToken: boolean;
}

/** The checks, in the order a request meets them. */
export interface RequestHeaderCheck {
  /** `Host` and `Origin`: before anything else, the route and the proxy token included. */
  (request: InboundRequest): RequestHeaderCheckResult;
  /**
   * The body's type and encoding: when the body is about to be read, so that a wrong route (404) or a
   * missing token (401) is reported first.
   */
  checkBody(this: void, request: InboundRequest): void;
}

/** What a request that passed the check still needs. */
export interface RequestHeaderCheckResult {
  /** CORS headers for an allowed `Origin`, to add to the answer. */
  corsHeaders: Record<string, string> | undefined;
  /** An allowed CORS preflight (`OPTIONS` with `Access-Control-Request-Method`): answer it with 204. */
  isPreflight: boolean;
}

/** RFC 3986 reg-name characters (letters, digits, `-._~`, sub-delims and percent signs), non-empty. */
const REG_NAME = /^[a-z0-9\-._~!$&'()*+,;=%]+$/i;
/** `name[:port]` or `[v6][:port]`. */
const HOST_HEADER = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d{0,5}))?$/;

/** The methods and headers a browser page of an allowed origin may use (what the SDK sends). */
const CORS_ALLOW_METHODS = 'GET, POST, OPTIONS';
const CORS_MAX_AGE_SECONDS = '600';

/** Whether a media type is JSON: `application/json` or any `+json` type, any case, any parameters. */
export function isJsonMediaType(contentType: string): boolean {
  const essence = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return essence === 'application/json' || (essence.startsWith('application/') && essence.endsWith('+json'));
}

/** Whether `request` is an HTTP/1.0 `GET` or `HEAD` of `/healthz` (any query) with no `Host` header. */
function isHostlessHealthProbe(request: InboundRequest): boolean {
  const isRead = request.method === 'GET' || request.method === 'HEAD';
  const isHealth = request.url === '/healthz' || request.url.startsWith('/healthz?');
  return request.httpVersion === '1.0' && isRead && isHealth;
}

/** A host name or address, lower-case, without brackets and without a trailing dot. */
function bareHost(host: string): string {
  const lower = host.toLowerCase();
  const unbracketed = lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
  return unbracketed.endsWith('.') ? unbracketed.slice(0, -1) : unbracketed;
}

/** Whether a host (no port) is loopback: `localhost`, `*.localhost` (RFC 6761 §6.3), 127/8, `::1`. */
function isLoopbackName(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  switch (isIP(host)) {
    case 4:
      return host.startsWith('127.');
    case 6:
      return host === '::1' || host === '0:0:0:0:0:0:0:1' || host.startsWith('::ffff:127.');
    default:
      return false;
  }
}

/** Parses a `Host` value (or an absolute-form authority); `undefined` when it is malformed. */
function parseHost(value: string): { host: string; port: string | undefined } | undefined {
  const match = HOST_HEADER.exec(value);
  if (match === null) return undefined;
  const name = match[1]!;
  const port = match[2];
  if (port === '' || (port !== undefined && Number(port) > 65_535)) return undefined;
  if (name.startsWith('[')) {
    if (isIP(name.slice(1, -1)) !== 6) return undefined;
  } else if (!REG_NAME.test(name)) {
    return undefined;
  }
  return { host: bareHost(name), port };
}

/** The values of one header as sent, however many times it was sent. */
function headerLines(request: InboundRequest, name: string): string[] {
  const raw = request.rawHeaders;
  if (raw !== undefined) {
    const values: string[] = [];
    for (let index = 0; index + 1 < raw.length; index += 2) {
      if (raw[index]!.toLowerCase() === name) values.push(raw[index + 1]!);
    }
    return values;
  }
  const value = request.headers[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function normaliseOrigin(origin: string): string {
  const trimmed = origin.trim().toLowerCase();
  return trimmed.endsWith('/') ? trimmed.slice(0, -1) : trimmed;
}

/**
 * Returns the check for one proxy's settings. The check throws the proxy error to answer (400, 403 or
 * 415, as a Messages error) or says what the answer needs.
 */
export function createRequestHeaderCheck(options: RequestHeaderCheckOptions): RequestHeaderCheck {
  const allowedOrigins = new Set((options.allowedOrigins ?? []).map(normaliseOrigin));
  const publicHosts = new Set<string>();
  for (const entry of options.publicHosts ?? []) {
    const parsed = parseHost(entry.trim());
    if (parsed !== undefined)
      publicHosts.add(parsed.port === undefined ? parsed.host : `${parsed.host}:${parsed.port}`);
  }
  const listenHost = options.listenHost === undefined ? undefined : bareHost(options.listenHost);

  function isKnownHost(host: string, port: string | undefined): boolean {
    if (isLoopbackName(host) || host === listenHost) return true;
    return publicHosts.has(host) || (port !== undefined && publicHosts.has(`${host}:${port}`));
  }

  function checkHost(request: InboundRequest): void {
    // An absolute-form target names the host itself, and then `Host` is ignored (RFC 9112 §3.2.2).
    const authority = request.url.startsWith('/') ? undefined : parseRequestTarget(request.url).authority;
    const hosts = headerLines(request, 'host');
    if (authority === undefined) {
      if (hosts.length === 0) {
        // HTTP/1.0 does not require Host (RFC 9112 §3.2 asks it of HTTP/1.1), and a browser always sends
        // one, so a probe without it names no host a rebinding page could have chosen. Only the liveness
        // route is opened to it: a balancer that marks every replica down is the cost of refusing it.
        if (isHostlessHealthProbe(request)) return;
        throw proxyError(400, 'the request has no Host header');
      }
      if (hosts.length > 1) throw proxyError(400, 'the request has more than one Host header');
    }
    const value = authority ?? hosts[0]!;
    const parsed = parseHost(value.trim());
    if (parsed === undefined)
      throw proxyError(400, `the Host header is malformed: ${JSON.stringify(value.slice(0, 100))}`);
    if (options.hasProxyToken || isKnownHost(parsed.host, parsed.port)) return;
    throw proxyError(
      400,
      `this proxy is not served under the name ${JSON.stringify(parsed.host)}: address it as 127.0.0.1 or localhost, ` +
        'or start it with --public-host <name> (TPX_PUBLIC_HOSTS) to accept that name',
    );
  }

  function checkOrigin(request: InboundRequest): string | undefined {
    const origins = headerLines(request, 'origin');
    if (origins.length === 0) return undefined;
    const origin = normaliseOrigin(origins[0]!);
    if (origins.length === 1 && allowedOrigins.has(origin)) return origins[0]!.trim();
    throw proxyError(
      403,
      `requests from web pages of ${JSON.stringify(origins[0]!.slice(0, 200))} are not allowed: ` +
        'start the proxy with --allow-origin <origin> (TPX_ALLOWED_ORIGINS) to allow that origin',
    );
  }

  function checkBody(request: InboundRequest): void {
    const types = headerLines(request, 'content-type');
    if (types.length !== 1 || !isJsonMediaType(types[0]!)) {
      const shown = types.length === 0 ? 'no content type' : JSON.stringify(types.join(', ').slice(0, 100));
      throw proxyError(415, `the request body must be JSON (content-type: application/json), got ${shown}`);
    }
    for (const encoding of headerLines(request, 'content-encoding')) {
      for (const coding of encoding.split(',')) {
        const name = coding.trim().toLowerCase();
        if (name !== '' && name !== 'identity') {
          throw proxyError(
            415,
            `this proxy does not accept request bodies with content-encoding ${JSON.stringify(name)}: send the JSON uncompressed`,
          );
        }
      }
    }
  }

  const check = (request: InboundRequest): RequestHeaderCheckResult => {
    checkHost(request);
    const origin = checkOrigin(request);
    const isPreflight =
      origin !== undefined &&
      request.method === 'OPTIONS' &&
      headerLines(request, 'access-control-request-method').length > 0;
    if (origin === undefined) return { corsHeaders: undefined, isPreflight: false };
    const corsHeaders: Record<string, string> = {
      'access-control-allow-origin': origin,
      vary: 'origin',
      'access-control-expose-headers': 'request-id, retry-after, x-should-retry',
    };
    if (isPreflight) {
      corsHeaders['access-control-allow-methods'] = CORS_ALLOW_METHODS;
      const requested = headerLines(request, 'access-control-request-headers').join(', ');
      if (requested !== '') corsHeaders['access-control-allow-headers'] = requested;
      corsHeaders['access-control-max-age'] = CORS_MAX_AGE_SECONDS;
    }
    return { corsHeaders, isPreflight };
  };
  return Object.assign(check, { checkBody });
}
