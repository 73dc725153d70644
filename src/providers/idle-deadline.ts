/**
 * The idle deadline of a response body: how long the upstream may go silent mid-response.
 *
 * @module
 */
import { deadlineError } from './classify-error.js';
import type { AttemptContext, HttpResponse } from './http-exchange.js';

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
