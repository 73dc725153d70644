/**
 * The handler of one request dispatched to undici: its callbacks become the {@link HttpResponse} a
 * provider reads, with the first-byte deadline kept on a native timer, the exchange's cancellation
 * honoured at every point, and a compressed body decoded on its way in.
 *
 * @module
 */
import type { Transform } from 'node:stream';
import { util as undiciUtil, type Dispatcher } from 'undici';
import type { TransportError } from '../errors.js';
import { classifyError, deadlineError } from './classify-error.js';
import { contentDecoders, decodeInto } from './content-decoder.js';
import type { AttemptContext, HttpResponse } from './http-exchange.js';
import { ResponseBody } from './response-body.js';

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** undici's raw response headers (name, value, name, value, … as bytes) as one lower-case record. */
function parseRawHeaders(raw: Buffer[]): Record<string, string> {
  return flattenHeaders(undiciUtil.parseHeaders(raw));
}

/**
 * Settles one request's promise: resolved with the response once its headers arrived (its body then
 * pulled chunk by chunk), rejected with a `TransportError` for any failure before that; a failure after
 * it fails the body.
 */
export class ResponseHandler implements Dispatcher.DispatchHandler {
  readonly #context: AttemptContext;
  readonly #resolve: (response: HttpResponse) => void;
  readonly #reject: (error: TransportError) => void;
  readonly #body = new ResponseBody();
  /** undici's abort for the request, known once a connection carries it. */
  #abortRequest: ((reason: Error) => void) | undefined;
  /** Why the request was cancelled while it still waited for a connection. */
  #abortBeforeConnect: Error | undefined;
  #headersReceived = false;
  #settled = false;
  /** The first-byte deadline. */
  #timer: NodeJS.Timeout | undefined;
  /** Where body bytes go when the answer is compressed: the first of its decoders. */
  #decoderInput: Transform | undefined;
  #decoders: Transform[] = [];
  readonly #onExchangeAbort = (): void => this.#cancel(this.#context.cancellation.reason);

  constructor(
    context: AttemptContext,
    resolve: (response: HttpResponse) => void,
    reject: (error: TransportError) => void,
  ) {
    this.#context = context;
    this.#resolve = resolve;
    this.#reject = reject;
    context.cancellation.onAbort(this.#onExchangeAbort);
  }

  /** The request could not be handed to undici at all. */
  failToDispatch(error: unknown): void {
    this.#finish();
    this.#reject(classifyError(error, this.#context));
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#abortRequest = abort;
    if (this.#abortBeforeConnect !== undefined) {
      abort(this.#abortBeforeConnect);
      return;
    }
    this.#startFirstByteDeadline();
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx: the real answer follows
    this.#headersReceived = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const headers = parseRawHeaders(rawHeaders);
    try {
      this.#decoders = contentDecoders(headers['content-encoding'], this.#context.provider);
    } catch (error) {
      const failure = classifyError(error, this.#context);
      this.#finish();
      this.#reject(failure);
      this.#abortRequest?.(failure);
      return false;
    }
    this.#attachBody(headers['content-encoding'], resume);
    this.#resolve({ status: statusCode, headers, body: this.#body });
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#decoderInput !== undefined) return this.#decoderInput.write(chunk);
    return this.#body.push(chunk);
  }

  onComplete(): void {
    this.#finish();
    if (this.#decoderInput !== undefined) this.#decoderInput.end();
    else this.#body.end();
  }

  onError(error: Error): void {
    this.#finish();
    for (const decoder of this.#decoders) decoder.destroy();
    if (this.#headersReceived) this.#body.fail(error);
    else this.#reject(classifyError(error, this.#context));
  }

  /**
   * undici's header and body timeouts run on a coarse clock (it checks them every half second or so), so
   * a 100 ms first-byte deadline would pass after about a second. The deadline is kept here on a native
   * timer; undici's stays as a backstop and can only fire later. It starts when the request is written
   * (undici's onConnect: a connection is ready and the request goes on it), not before: the time spent
   * connecting belongs to the connect deadline, and a slow connect must not be reported as an upstream
   * that took too long to answer.
   */
  #startFirstByteDeadline(): void {
    const { firstByteTimeoutMs } = this.#context.deadlines;
    if (firstByteTimeoutMs <= 0 || this.#settled) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => this.#cancel(deadlineError('first-byte', this.#context)),
      firstByteTimeoutMs,
    );
  }

  /** Connects the body to the request: directly, or through the decoders of its content encoding. */
  #attachBody(contentEncoding: string | undefined, resume: () => void): void {
    const decoders = this.#decoders;
    if (decoders.length === 0) {
      this.#body.attach((reason) => this.#abortRequest?.(reason), resume);
      return;
    }
    this.#decoderInput = decodeInto(this.#body, decoders, this.#context, contentEncoding!, (reason) =>
      this.#abortRequest?.(reason),
    );
    const output = decoders.at(-1)!;
    this.#body.attach(
      (reason) => {
        this.#abortRequest?.(reason);
        for (const decoder of decoders) decoder.destroy();
      },
      () => {
        output.resume();
        resume();
      },
    );
    this.#decoderInput.on('drain', resume);
  }

  #cancel(reason: unknown): void {
    if (this.#settled) return;
    const error = reason instanceof Error ? reason : classifyError(reason, this.#context);
    if (this.#abortRequest === undefined) {
      // Still waiting for a connection: undici aborts the request once it has one (or gives up on it);
      // the caller hears now.
      this.#abortBeforeConnect = error;
      this.#finish();
      this.#reject(classifyError(error, this.#context));
    } else {
      this.#abortRequest(error);
    }
  }

  #finish(): void {
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#context.cancellation.offAbort(this.#onExchangeAbort);
  }
}
