/**
 * The cancellation of one exchange, as the transport and the proxy use it internally: aborted once,
 * with a reason, telling plain listener functions. An `AbortSignal` is made only when something needs
 * one (a back-off sleep, a token command), through {@link Cancellation.signal}.
 *
 * Why not `AbortController` throughout: on Node 20 creating an `AbortSignal` and adding and removing
 * its listeners cost about 6 µs per exchange for the two the proxy used (one per client request, one
 * per transport exchange), 4% of the proxy's CPU per request on the native path, for exchanges that
 * almost never abort.
 *
 * @module
 */

/** The key under which the proxy hands the transport its client's cancellation instead of a signal. */
export const CANCELLATION: unique symbol = Symbol('tpx-transport.cancellation');

/** Exchange options that may carry a {@link Cancellation} under {@link CANCELLATION}. */
export interface WithCancellation {
  [CANCELLATION]?: Cancellation;
}

export class Cancellation {
  #aborted = false;
  #reason: unknown = undefined;
  #listeners: (() => void)[] | undefined;
  #controller: AbortController | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** Aborts with `reason` and tells every listener, once; later calls change nothing. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }

  /** Calls `listener` once, on abort. Not called when already aborted: check `aborted` first. */
  onAbort(listener: () => void): void {
    if (this.#aborted) return;
    (this.#listeners ??= []).push(listener);
  }

  offAbort(listener: () => void): void {
    const listeners = this.#listeners;
    if (listeners === undefined) return;
    const index = listeners.lastIndexOf(listener);
    if (index !== -1) listeners.splice(index, 1);
  }

  /** An `AbortSignal` that aborts with this cancellation (and with its reason); made on first use. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /**
   * Aborts this cancellation when `source` aborts, with `reason()` as its reason. Returns the function
   * that undoes the link.
   */
  follow(source: AbortSignal | Cancellation, reason: () => unknown): () => void {
    const onSourceAbort = () => this.abort(reason());
    if (source.aborted) {
      onSourceAbort();
      return () => {};
    }
    if (source instanceof Cancellation) {
      source.onAbort(onSourceAbort);
      return () => source.offAbort(onSourceAbort);
    }
    source.addEventListener('abort', onSourceAbort, { once: true });
    return () => source.removeEventListener('abort', onSourceAbort);
  }
}
