/**
 * The one place that talks HTTP: a POST or GET through undici with the connect, first-byte and idle
 * deadlines applied, a response size limit, and every failure classified as a `TransportError`.
 *
 * @module
 */
import {
  Agent,
  EnvHttpProxyAgent,
  buildConnector,
  errors as undiciErrors,
  util as undiciUtil,
  type Dispatcher,
} from 'undici';
import { TransportError, isTransportError, type ProviderName } from '../errors.js';
import type { Cancellation } from './cancellation.js';
import type { Deadlines } from './exchange-types.js';
import type { Transform } from 'node:stream';
import { withNotedHeaders, type AttemptNotes } from './attempt-notes.js';
import { contentDecoders } from './content-decoder.js';
import { ResponseBody } from './response-body.js';
import { responseTooLarge } from './response-too-large.js';
import { skipContinueResponses } from './skip-continue-responses.js';

export { ResponseBody };

/** What a provider needs to make one attempt of an exchange. */
export interface AttemptContext {
  /** Aborts on caller cancel (reason: `MODEL_EABORTED`) or the total deadline (reason: `MODEL_ETIMEOUT`). */
  cancellation: Cancellation;
  deadlines: Deadlines;
  dispatcher: (connectTimeoutMs: number) => Dispatcher;
  maxResponseBytes: number;
  provider: ProviderName;
  /** Present when the attempt is observed: extra headers to send, and where the upstream model is noted. */
  notes?: AttemptNotes;
  /** Headers added to every request of the exchange (the proxy's hop header). */
  upstreamHeaders?: Readonly<Record<string, string>>;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** Pulled chunk by chunk; see {@link ResponseBody}. */
  body: ResponseBody;
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Splits an absolute URL into the origin and the path undici's `dispatch` takes, without a `URL` object. */
function splitUrl(url: string): { origin: string; path: string } {
  const slash = url.indexOf('/', url.indexOf('//') + 2);
  return slash === -1 ? { origin: url, path: '/' } : { origin: url.slice(0, slash), path: url.slice(slash) };
}

/** undici's raw response headers (name, value, name, value, … as bytes) as one lower-case record. */
function parseRawHeaders(raw: Buffer[]): Record<string, string> {
  return flattenHeaders(undiciUtil.parseHeaders(raw));
}

/**
 * Sends one HTTP request. Resolves once the response headers arrived; rejects with a `TransportError`.
 *
 * It talks to undici's dispatcher directly, with a handler of its own, rather than through
 * `undici.request`: the body is a {@link ResponseBody} the providers pull chunks from, not a Node
 * `Readable`, and no `AbortSignal` is made per attempt (see `providers/cancellation.ts`). In a loopback
 * client loop that took the client's CPU time per exchange from about 144 µs to 72–85 µs (see
 * docs/performance.md).
 */
export function httpRequest(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string | Uint8Array },
  context: AttemptContext,
): Promise<HttpResponse> {
  const { deadlines } = context;
  const exchange = context.cancellation;
  if (exchange.aborted) return Promise.reject(classifyError(exchange.reason, context));
  return new Promise<HttpResponse>((resolve, reject) => {
    const body = new ResponseBody();
    let abortRequest: ((reason: Error) => void) | undefined;
    let abortBeforeConnect: Error | undefined;
    let headersReceived = false;
    let settled = false;
    const cancel = (reason: unknown) => {
      if (settled) return;
      const error = reason instanceof Error ? reason : classifyError(reason, context);
      if (abortRequest === undefined) {
        // Still waiting for a connection: undici aborts the request once it has one (or gives up on it);
        // the caller hears now.
        abortBeforeConnect = error;
        finish();
        reject(classifyError(error, context));
      } else {
        abortRequest(error);
      }
    };
    const onExchangeAbort = () => cancel(exchange.reason);
    // undici's header and body timeouts run on a coarse clock (it checks them every half second or so),
    // so a 100 ms first-byte deadline would pass after about a second. The deadline is kept here on a
    // native timer; undici's stays as a backstop and can only fire later. It starts when the request is
    // written (undici's onConnect: a connection is ready and the request goes on it), not before: the
    // time spent connecting belongs to the connect deadline, and a slow connect must not be reported as
    // an upstream that took too long to answer.
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      settled = true;
      clearTimeout(timer);
      timer = undefined;
      exchange.offAbort(onExchangeAbort);
    };
    exchange.onAbort(onExchangeAbort);
    /** Where body bytes go when the answer is compressed: the first of its decoders. */
    let decoderInput: Transform | undefined;
    let decoders: Transform[] = [];
    const handler: Dispatcher.DispatchHandler = {
      onConnect(abort: (reason?: Error) => void) {
        abortRequest = abort;
        if (abortBeforeConnect !== undefined) {
          abort(abortBeforeConnect);
          return;
        }
        if (deadlines.firstByteTimeoutMs > 0 && !settled) {
          clearTimeout(timer);
          timer = setTimeout(
            () => cancel(deadlineError('first-byte', context)),
            deadlines.firstByteTimeoutMs,
          );
        }
      },
      onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void) {
        if (statusCode < 200) return true; // 1xx: the real answer follows
        headersReceived = true;
        clearTimeout(timer);
        timer = undefined;
        const headers = parseRawHeaders(rawHeaders);
        try {
          decoders = contentDecoders(headers['content-encoding'], context.provider);
        } catch (error) {
          const failure = classifyError(error, context);
          finish();
          reject(failure);
          abortRequest?.(failure);
          return false;
        }
        if (decoders.length === 0) {
          body.attach((reason) => abortRequest?.(reason), resume);
        } else {
          decoderInput = decodeInto(body, decoders, context, headers['content-encoding']!, (reason) =>
            abortRequest?.(reason),
          );
          const output = decoders.at(-1)!;
          body.attach(
            (reason) => {
              abortRequest?.(reason);
              for (const decoder of decoders) decoder.destroy();
            },
            () => {
              output.resume();
              resume();
            },
          );
          decoderInput.on('drain', resume);
        }
        resolve({ status: statusCode, headers, body });
        return true;
      },
      onData(chunk: Buffer) {
        if (decoderInput !== undefined) return decoderInput.write(chunk);
        return body.push(chunk);
      },
      onComplete() {
        finish();
        if (decoderInput !== undefined) decoderInput.end();
        else body.end();
      },
      onError(error: Error) {
        finish();
        for (const decoder of decoders) decoder.destroy();
        if (headersReceived) body.fail(error);
        else reject(classifyError(error, context));
      },
    };
    const { origin, path } = splitUrl(url);
    try {
      context.dispatcher(deadlines.connectTimeoutMs).dispatch(
        {
          origin,
          path,
          method: init.method,
          // Compression is decoded when a server applies it anyway (see content-decoder.ts), but asked
          // not to: the answers are generated token by token, and decoding costs the proxy CPU.
          headers: withNotedHeaders(
            { 'accept-encoding': 'identity', ...init.headers, ...context.upstreamHeaders },
            context.notes,
          ),
          body: init.body ?? null,
          headersTimeout: deadlines.firstByteTimeoutMs,
          bodyTimeout: deadlines.idleTimeoutMs,
        },
        handler,
      );
    } catch (error) {
      finish();
      reject(classifyError(error, context));
    }
  });
}

/**
 * Pipes a compressed body through its decoders into `body`, and returns where the raw bytes go. Decoded
 * bytes past the response limit end the body (a small compressed answer can decode to gigabytes); a
 * body that cannot be decoded fails with `MODEL_EPROTO` naming its encoding.
 */
function decodeInto(
  body: ResponseBody,
  decoders: Transform[],
  context: AttemptContext,
  encoding: string,
  abort: (reason: Error) => void,
): Transform {
  for (let index = 1; index < decoders.length; index++) decoders[index - 1]!.pipe(decoders[index]!);
  const output = decoders.at(-1)!;
  let decodedBytes = 0;
  const fail = (error: TransportError) => {
    body.fail(error);
    abort(error);
    for (const decoder of decoders) decoder.destroy();
  };
  output.on('data', (chunk: Buffer) => {
    decodedBytes += chunk.length;
    if (decodedBytes > context.maxResponseBytes) {
      fail(tooBig(context.maxResponseBytes, context.provider));
      return;
    }
    if (!body.push(chunk)) output.pause();
  });
  output.on('end', () => body.end());
  for (const decoder of decoders) {
    decoder.on('error', (error: Error) => {
      fail(
        new TransportError(
          'MODEL_EPROTO',
          `the ${context.provider} response body could not be decoded as ${encoding}: ${error.message}`,
          { provider: context.provider, cause: error },
        ),
      );
    });
  }
  return decoders[0]!;
}

/**
 * The idle deadline of a response body: one native timer for the whole body, re-armed whenever the
 * reader starts waiting for the next chunk. Time the reader spends between chunks does not count
 * (backpressure is not silence): a timer that fires while the reader is busy only re-arms itself.
 * When it fires while the reader waits, the body is destroyed with `MODEL_ETIMEOUT` naming `idle`.
 */
export class IdleDeadline {
  #timer: NodeJS.Timeout | undefined;
  #waiting = false;

  constructor(response: HttpResponse, context: AttemptContext) {
    const idleMs = context.deadlines.idleTimeoutMs;
    if (idleMs <= 0) return;
    this.#timer = setTimeout(() => {
      // A body that has settled needs no deadline, even if its reader never stops this one.
      if (response.body.settled) return;
      if (this.#waiting) response.body.destroy(deadlineError('idle', context));
      else this.#timer?.refresh();
    }, idleMs);
    // While the reader waits, the connection keeps the process alive; the deadline need not.
    this.#timer.unref();
  }

  /** The reader waits for the next chunk from now on. */
  waiting(): void {
    this.#waiting = true;
    this.#timer?.refresh();
  }

  /** A chunk arrived: the reader is busy with it. */
  busy(): void {
    this.#waiting = false;
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** Decodes a whole body. A decoder without `stream` keeps no state between calls, so one serves all. */
const WHOLE_BODY_DECODER = new TextDecoder('utf-8');

/**
 * Reads a whole response body as text, within the size limit. The idle deadline applies between
 * chunks; the total deadline and a cancel through the signal (which ends the body).
 */
export async function readBody(
  response: HttpResponse,
  context: AttemptContext,
  limit = context.maxResponseBytes,
): Promise<string> {
  const { body } = response;
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    body.destroy();
    throw tooBig(limit, context.provider);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const idle = new IdleDeadline(response, context);
  try {
    for (;;) {
      idle.waiting();
      const chunk = await body.read();
      idle.busy();
      if (chunk === null) break;
      size += chunk.length;
      if (size > limit) {
        body.destroy();
        throw tooBig(limit, context.provider);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    throw classifyError(error, context);
  } finally {
    idle.stop();
  }
  // TextDecoder drops a leading byte order mark, which a JSON reader may ignore (RFC 8259 §8.1).
  return WHOLE_BODY_DECODER.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
}

function tooBig(limit: number, provider: ProviderName): TransportError {
  return responseTooLarge(
    provider,
    `the ${provider} response is larger than the limit of ${limit} bytes (maxResponseBytes)`,
  );
}

/** The `MODEL_ETIMEOUT` error for one of the per-attempt deadlines. */
function deadlineError(
  deadline: 'connect' | 'first-byte' | 'idle',
  context: AttemptContext,
  cause?: unknown,
): TransportError {
  const { provider, deadlines } = context;
  const message =
    deadline === 'connect'
      ? `could not connect to the ${provider} endpoint within ${deadlines.connectTimeoutMs} ms (connect deadline)`
      : deadline === 'first-byte'
        ? `the ${provider} endpoint sent no response headers within ${deadlines.firstByteTimeoutMs} ms (first-byte deadline)`
        : `the ${provider} endpoint went silent for ${deadlines.idleTimeoutMs} ms mid-response (idle deadline)`;
  return new TransportError(
    'MODEL_ETIMEOUT',
    message,
    cause === undefined ? { provider, deadline } : { provider, deadline, cause },
  );
}

/** Maps undici, socket and abort failures to the right `MODEL_*` code. */
export function classifyError(error: unknown, context: AttemptContext): TransportError {
  if (isTransportError(error)) return error;
  const provider = context.provider;
  if (context.cancellation.aborted) {
    const reason: unknown = context.cancellation.reason;
    if (isTransportError(reason)) return reason;
    return new TransportError('MODEL_EABORTED', 'the exchange was cancelled by the caller', {
      provider,
      cause: error,
    });
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof undiciErrors.ConnectTimeoutError || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return deadlineError('connect', context, error);
  }
  if (error instanceof undiciErrors.HeadersTimeoutError || code === 'UND_ERR_HEADERS_TIMEOUT') {
    return deadlineError('first-byte', context, error);
  }
  if (error instanceof undiciErrors.BodyTimeoutError || code === 'UND_ERR_BODY_TIMEOUT') {
    return deadlineError('idle', context, error);
  }
  if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    return new TransportError(
      'MODEL_EPROTO',
      `the ${provider} response body did not match its content-length`,
      {
        provider,
        cause: error,
        retryable: true,
      },
    );
  }
  if (code === 'ECONNREFUSED' || refusedInside(error)) {
    const where = refusedAddress(error) ?? 'the upstream address';
    return new TransportError(
      'MODEL_ETRANSPORT',
      `nothing is listening at ${where} (connection refused, ECONNREFUSED): the ${provider} upstream is not running there, or the base URL names the wrong host or port`,
      { provider, cause: error },
    );
  }
  const detail = error instanceof Error ? error.message : String(error);
  const codeText = typeof code === 'string' ? ` (${code})` : '';
  return new TransportError(
    'MODEL_ETRANSPORT',
    `network failure talking to the ${provider} endpoint: ${detail}${codeText}`,
    {
      provider,
      cause: error,
    },
  );
}

/** Whether an aggregate connect failure (every address of a name tried) was refused on each. */
function refusedInside(error: unknown): boolean {
  const errors = (error as { errors?: unknown } | null)?.errors;
  return (
    Array.isArray(errors) &&
    errors.length > 0 &&
    errors.every((inner) => (inner as { code?: unknown } | null)?.code === 'ECONNREFUSED')
  );
}

/** `host:port` of a refused connection, from the error node gives (or the first of an aggregate). */
function refusedAddress(error: unknown): string | undefined {
  const first = refusedInside(error) ? (error as { errors: unknown[] }).errors[0] : error;
  const { address, port } = (first ?? {}) as { address?: unknown; port?: unknown };
  if (typeof address !== 'string') return undefined;
  const host = address.includes(':') ? `[${address}]` : address;
  return typeof port === 'number' ? `${host}:${port}` : host;
}

/**
 * undici's connector, closing the sockets it opens for nothing. When a request is aborted in flight (a
 * cancel, a deadline, a proxy client that went away), undici puts it back in its queue, opens a new
 * connection for it and only then drops it (nodejs/undici#5845). That socket never carries a request,
 * and as it served no response no keep-alive timer ever closes it: one idle connection left open per
 * abort. undici writes a queued request synchronously once its socket connects, so a socket with
 * nothing written right after the connect callback is one of those, and is closed at once. Each socket
 * also skips interim `100 Continue` responses, which undici cannot (see `skip-continue-responses.ts`).
 */
function connectorClosingUnusedSockets(connectTimeoutMs: number): buildConnector.connector {
  // undici reads a timeout of 0 as "none" (and null as its 10 s default).
  const connect = buildConnector({ timeout: connectTimeoutMs });
  return (options, callback) => {
    connect(options, (error, socket) => {
      if (error !== null) {
        callback(error, null);
        return;
      }
      skipContinueResponses(socket);
      callback(null, socket);
      if (socket.bytesWritten === 0 && !socket.destroyed) socket.destroy();
    });
  };
}

/** The outbound proxy settings of an environment, as curl and most tools read them (lower case first). */
export function outboundProxySettings(
  env: Record<string, string | undefined>,
): { httpProxy: string; httpsProxy: string; noProxy: string } | undefined {
  const read = (name: string) => (env[name.toLowerCase()] ?? env[name] ?? '').trim();
  const httpProxy = read('HTTP_PROXY');
  const httpsProxy = read('HTTPS_PROXY');
  if (httpProxy === '' && httpsProxy === '') return undefined;
  return { httpProxy, httpsProxy, noProxy: read('NO_PROXY') };
}

/**
 * One keep-alive pool per connect deadline, so a per-call connect timeout is honoured. When the
 * environment names an outbound proxy (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`), undici's
 * `EnvHttpProxyAgent` routes each request by those rules, read from `env` (the transport's snapshot),
 * not from `process.env`.
 */
export function createDispatcherPool(env: Record<string, string | undefined> = {}): {
  get(connectTimeoutMs: number): Dispatcher;
  close(): Promise<void>;
} {
  const agents = new Map<number, Dispatcher>();
  const proxy = outboundProxySettings(env);
  return {
    get(connectTimeoutMs) {
      let agent = agents.get(connectTimeoutMs);
      if (agent === undefined) {
        const agentOptions = {
          connect: connectorClosingUnusedSockets(connectTimeoutMs),
          keepAliveTimeout: 4_000,
          // No cap on connections per origin: a proxy in front of many agents must not queue exchanges
          // behind a fixed pool, where they would wait with their first-byte deadline already running.
          connections: null,
          pipelining: 1,
        };
        agent =
          proxy === undefined
            ? new Agent(agentOptions)
            : new EnvHttpProxyAgent({ ...agentOptions, ...proxy });
        agents.set(connectTimeoutMs, agent);
      }
      return agent;
    },
    async close() {
      const all = [...agents.values()];
      agents.clear();
      await Promise.all(all.map((agent) => agent.close()));
    },
  };
}
