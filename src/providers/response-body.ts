/**
 * A response body as the providers read it: chunks pulled one at a time with `read()`, fed by the HTTP
 * client as they arrive. It replaces a Node `Readable` (undici's `BodyReadable`): a proxy reads every
 * upstream body exactly once, in order, and the stream machinery around a `Readable` (its state
 * object, events, `nextTick`s, async iterator) cost more per exchange than the reading itself.
 *
 * Backpressure: while more than {@link HIGH_WATER_BYTES} wait unread, the producer is told to pause,
 * and resumed once the reader has taken them. A read takes everything that has arrived.
 *
 * @module
 */

/** Unread bytes above which the producer pauses the connection. */
export const HIGH_WATER_BYTES = 64 * 1024;

/**
 * The reason a body is destroyed with when its reader is done with it. One shared error: a body left
 * early is destroyed on every streamed exchange (the reader stops at `[DONE]` or `message_stop`), and a
 * fresh error each time would cost a stack trace on a path where nothing failed.
 */
const NO_LONGER_READ = new Error('the response body is no longer read');

type Waiter = { resolve(chunk: Buffer | null): void; reject(error: Error | undefined): void };

export class ResponseBody {
  #queue: Buffer[] = [];
  #queuedBytes = 0;
  #state: 'open' | 'ended' | 'failed' = 'open';
  #failure: Error | undefined;
  #waiter: Waiter | undefined;
  #abort: ((reason: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  #paused = false;
  #onSettled: (() => void) | undefined;
  #destroyed = false;
  #deliveryScheduled = false;
  #source: Iterator<Uint8Array> | undefined;

  /**
   * A body already received in full, delivered one `read()` per given chunk, however small (recordings,
   * and tests that split a stream at every byte).
   */
  static of(chunks: Iterable<Uint8Array>): ResponseBody {
    const body = new ResponseBody();
    body.#source = chunks[Symbol.iterator]();
    return body;
  }

  /**
   * Connects the producer: `abort` ends the request while the body is still arriving; `resume` lets a
   * paused connection go on; `onSettled` runs once when the body has ended, failed or been destroyed.
   */
  attach(abort: (reason: Error) => void, resume: () => void, onSettled?: () => void): void {
    this.#abort = abort;
    this.#resume = resume;
    this.#onSettled = onSettled;
  }

  /** Whether the body has ended, failed or been destroyed: nothing more will arrive. */
  get settled(): boolean {
    return this.#state !== 'open' || this.#destroyed;
  }

  /** Whether the body was destroyed by its reader (or its deadline). */
  get destroyed(): boolean {
    return this.#destroyed;
  }

  /**
   * Producer: one more chunk. Returns false when the producer should pause.
   *
   * A waiting reader is not woken at once but in a microtask: the HTTP parser hands over every chunk of
   * one socket read synchronously (a streamed answer arrives as many small HTTP chunks), and the reader
   * then takes them all in one `read()`, as one step through the layers above.
   */
  push(chunk: Buffer): boolean {
    if (this.#state !== 'open' || this.#destroyed) return true;
    this.#queue.push(chunk);
    this.#queuedBytes += chunk.length;
    if (this.#waiter !== undefined && !this.#deliveryScheduled) {
      this.#deliveryScheduled = true;
      queueMicrotask(this.#deliver);
    }
    if (this.#queuedBytes > HIGH_WATER_BYTES) this.#paused = true;
    return !this.#paused;
  }

  /** Producer: the body is complete. */
  end(): void {
    if (this.#state !== 'open') return;
    this.#state = 'ended';
    this.#settle();
    // Chunks still queued for a waiting reader go first; their delivery also reports the end.
    if (this.#waiter !== undefined && !this.#deliveryScheduled) {
      this.#deliveryScheduled = true;
      queueMicrotask(this.#deliver);
    }
  }

  #deliver = (): void => {
    this.#deliveryScheduled = false;
    const waiter = this.#waiter;
    if (waiter === undefined) return;
    if (this.#queue.length > 0) {
      this.#waiter = undefined;
      waiter.resolve(this.#take());
    } else if (this.#state === 'ended') {
      this.#waiter = undefined;
      waiter.resolve(null);
    }
  };

  /** Everything queued, as one buffer. */
  #take(): Buffer {
    const queue = this.#queue;
    const chunk = queue.length === 1 ? queue[0]! : Buffer.concat(queue, this.#queuedBytes);
    this.#queue = [];
    this.#queuedBytes = 0;
    if (this.#paused) {
      this.#paused = false;
      this.#resume?.();
    }
    return chunk;
  }

  /** Producer: the body broke off with `error`. */
  fail(error: unknown): void {
    if (this.#state !== 'open') return;
    this.#state = 'failed';
    this.#failure = error instanceof Error ? error : new Error(String(error));
    this.#queue = [];
    this.#settle();
    const waiter = this.#waiter;
    if (waiter !== undefined) {
      this.#waiter = undefined;
      waiter.reject(this.#failure);
    }
  }

  /**
   * Everything that arrived since the last read, as one buffer, or `null` once the body ended; rejects
   * with the error the body failed with. One read at a time.
   */
  read(): Promise<Buffer | null> {
    if (this.#source !== undefined && !this.#destroyed) {
      const next = this.#source.next();
      if (next.done !== true) {
        const chunk = next.value;
        return Promise.resolve(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      }
      this.#source = undefined;
      this.#state = 'ended';
    }
    // Checked first: chunks that arrived for a waiting read are that read's, not a second one's.
    if (this.#waiter !== undefined)
      return Promise.reject(new Error('a response body is read one chunk at a time'));
    if (this.#queue.length > 0) return Promise.resolve(this.#take());
    if (this.#state === 'ended') return Promise.resolve(null);
    // Set exactly when the body failed.
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    // Nothing is queued, so the producer is not paused: only queued bytes above the mark pause it, and
    // every way of emptying the queue either resumes it (`#take`) or ends the body.
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  /**
   * The reader is done. A body still arriving has its request aborted (the connection is closed) and a
   * pending read rejects with `error`; a body received in full only lets go of its chunks.
   */
  destroy(error?: unknown): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#source = undefined;
    this.#queue = [];
    this.#queuedBytes = 0;
    if (this.#state !== 'open') return;
    const reason = error ?? NO_LONGER_READ;
    this.fail(reason);
    this.#abort?.(reason instanceof Error ? reason : NO_LONGER_READ);
  }

  #settle(): void {
    const onSettled = this.#onSettled;
    this.#onSettled = undefined;
    onSettled?.();
  }
}
