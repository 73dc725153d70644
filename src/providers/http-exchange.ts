/**
 * The one place that talks HTTP: a POST or GET through undici with the connect, first-byte and idle
 * deadlines applied, a response size limit, and every failure classified as a `TransportError`
 * (`classify-error.ts`). The request's handler is `response-handler.ts`; the pools it goes through,
 * `dispatcher-pool.ts`.
 *
 * @module
 */
import type { ProviderName } from '../errors.js';
import type { Dispatcher } from 'undici';
import type { Cancellation } from './cancellation.js';
import type { Deadlines } from './exchange-types.js';
import { withNotedHeaders, type AttemptNotes } from './attempt-notes.js';
import { classifyError } from './classify-error.js';
import { IdleDeadline } from './idle-deadline.js';
import { ResponseBody } from './response-body.js';
import { ResponseHandler } from './response-handler.js';
import { bodyTooLarge } from './response-too-large.js';

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

/** Splits an absolute URL into the origin and the path undici's `dispatch` takes, without a `URL` object. */
function splitUrl(url: string): { origin: string; path: string } {
  const slash = url.indexOf('/', url.indexOf('//') + 2);
  return slash === -1 ? { origin: url, path: '/' } : { origin: url.slice(0, slash), path: url.slice(slash) };
}

/**
 * Sends one HTTP request. Resolves once the response headers arrived; rejects with a `TransportError`.
 *
 * It talks to undici's dispatcher directly, with a handler of its own ({@link ResponseHandler}), rather
 * than through `undici.request`: the body is a {@link ResponseBody} the providers pull chunks from, not a
 * Node `Readable`, and no `AbortSignal` is made per attempt (see `providers/cancellation.ts`). In a
 * loopback client loop that took the client's CPU time per exchange from about 144 µs to 72–85 µs.
 */
export function httpRequest(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string | Uint8Array },
  context: AttemptContext,
): Promise<HttpResponse> {
  const { deadlines } = context;
  const exchange = context.cancellation;
  if (exchange.aborted) return Promise.reject(classifyError(exchange.reason, context));
  if (init.body !== undefined) context.notes?.sendsBody?.(bodyText(init.body));
  return new Promise<HttpResponse>((resolve, reject) => {
    const handler = new ResponseHandler(context, resolve, reject);
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
      handler.failToDispatch(error);
    }
  });
}

/** A request body as text, for an observer that logs it. */
function bodyText(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : new TextDecoder().decode(body);
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
    throw bodyTooLarge(limit, context.provider);
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
        throw bodyTooLarge(limit, context.provider);
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
