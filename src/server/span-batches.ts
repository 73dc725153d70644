/**
 * Finished spans waiting to be exported, sent in batches as the OpenTelemetry specification's batching
 * span processor does (`OTEL_BSP_*`): a batch leaves when `maxExportBatchSize` spans wait, or
 * `scheduleDelayMs` after the first of them arrived, whichever is sooner; one export at a time, each
 * given at most `exportTimeoutMs`; at most `maxQueueSize` spans wait, and a span that finds the queue full
 * is dropped (and counted) rather than held without bound while a collector is away.
 *
 * Spans are encoded onto the batch being filled (`otlp-trace-encoding.ts`) a few dozen at a time: an
 * added span waits, as an object, until {@link ENCODE_EVERY} do (or the batch they go to would be full,
 * or it is time to export), and then all of them are encoded in one go. One at a time, as each exchange
 * ended, the encoding ran among the rest of the proxy's work, its code and tables pushed out of the
 * processor's caches by everything else an exchange does: in a proxy under load it cost several times
 * what it costs in a loop. In runs of a few dozen it runs at the loop's speed, and the spans waiting are
 * still young garbage when they are let go, so the queue holds bytes, not objects, for nearly all of their
 * wait. The export itself happens off the request's path.
 *
 * @module
 */
import type { SpanBatchEncoding } from './otlp-trace-encoding.js';
import type { RecordedSpan } from './recorded-span.js';

/** Where batches go: an OTLP exporter, or a test's recorder. */
export interface SpanBatchExporter {
  /** Starts an empty batch, in the encoding this exporter sends. */
  newBatch(expectedSpans: number): SpanBatchEncoding;
  /**
   * Sends one batch; rejects when it could not be delivered. It takes the batch's request when it is
   * called: the batch may be filled again while the export is still on its way.
   */
  export(batch: SpanBatchEncoding): Promise<void>;
  shutdown(): Promise<void>;
}

/** How spans are batched for export (`OTEL_BSP_*`, read by `tracing.ts`). */
export interface SpanBatchSettings {
  /** `OTEL_BSP_SCHEDULE_DELAY`: the longest a finished span waits for its batch, ms. */
  scheduleDelayMs: number;
  /** `OTEL_BSP_EXPORT_TIMEOUT`: how long one export may take, ms. */
  exportTimeoutMs: number;
  /** `OTEL_BSP_MAX_QUEUE_SIZE`: the most spans waiting; more are dropped. */
  maxQueueSize: number;
  /** `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`: the most spans in one export (never more than the queue). */
  maxExportBatchSize: number;
}

/** What the span export has lost so far: read by the Prometheus metrics at each scrape. */
export interface SpanExportLosses {
  /** Finished spans dropped because the queue was full. */
  readonly droppedSpans: number;
  /** Batches that could not be delivered (refused, collector away, or too slow). */
  readonly failedExports: number;
}

/** Spans that wait, as objects, to be encoded together; see the module comment. */
const ENCODE_EVERY = 32;

export class SpanBatches implements SpanExportLosses {
  readonly #settings: SpanBatchSettings;
  readonly #exporter: SpanBatchExporter;
  /** The batch being filled, and the full ones waiting for their export, oldest first. */
  #filling: SpanBatchEncoding;
  readonly #full: SpanBatchEncoding[] = [];
  /** Spans added but not yet encoded, in the order added: they go onto `#filling`, in that order. */
  readonly #unencoded: RecordedSpan[] = [];
  /** Spans waiting in all of them (encoded or not). */
  #waiting = 0;
  #timer: NodeJS.Timeout | undefined;
  #exporting: Promise<void> | undefined;
  /**
   * A batch whose export is over, emptied, to be filled again: its buffer is reused rather than a
   * new one allocated (and its pages touched afresh) for every batch.
   */
  #spare: SpanBatchEncoding | undefined;
  #isShutDown = false;
  /** Spans dropped because the queue was full. */
  droppedSpans = 0;
  /** Batches that could not be delivered (the collector refused, was away, or took too long). */
  failedExports = 0;

  constructor(settings: SpanBatchSettings, exporter: SpanBatchExporter) {
    this.#settings = settings;
    this.#exporter = exporter;
    this.#filling = exporter.newBatch(settings.maxExportBatchSize);
  }

  /** Queues a finished span for export. */
  add(span: RecordedSpan): void {
    if (this.#isShutDown) return;
    if (this.#waiting >= this.#settings.maxQueueSize) {
      this.droppedSpans += 1;
      return;
    }
    const unencoded = this.#unencoded;
    unencoded.push(span);
    this.#waiting += 1;
    // Encoded at once when the batch being filled is then full, so a full batch leaves without delay.
    if (
      unencoded.length >= ENCODE_EVERY ||
      this.#filling.count + unencoded.length >= this.#settings.maxExportBatchSize
    ) {
      this.#encode();
    }
    this.#schedule();
  }

  /**
   * Encodes the spans waiting as objects onto the batches, starting a new batch each time one fills. A
   * span that cannot be encoded is dropped and counted, never left to fail every later run (this also
   * runs from the export timer, where a throw would end the process).
   */
  #encode(): void {
    const unencoded = this.#unencoded;
    const limit = this.#settings.maxExportBatchSize;
    for (const span of unencoded) {
      try {
        this.#filling.add(span);
      } catch {
        this.#waiting -= 1;
        this.droppedSpans += 1;
        continue;
      }
      if (this.#filling.count >= limit) {
        this.#full.push(this.#filling);
        this.#filling = this.#newBatch();
      }
    }
    unencoded.length = 0;
  }

  #schedule(): void {
    if (this.#exporting !== undefined) return;
    if (this.#full.length > 0) {
      this.#exportOne();
      return;
    }
    if (this.#timer !== undefined || this.#waiting === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#exportOne();
    }, this.#settings.scheduleDelayMs);
    // Waiting spans never keep the process alive: shutdown exports them.
    this.#timer.unref();
  }

  #exportOne(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#encode();
    let batch = this.#full.shift();
    if (batch === undefined) {
      batch = this.#filling;
      this.#filling = this.#newBatch();
    }
    this.#waiting -= batch.count;
    this.#exporting = this.#send(batch).finally(() => {
      this.#exporting = undefined;
      this.#schedule();
    });
  }

  #newBatch(): SpanBatchEncoding {
    const spare = this.#spare;
    if (spare === undefined) return this.#exporter.newBatch(this.#settings.maxExportBatchSize);
    this.#spare = undefined;
    return spare;
  }

  async #send(batch: SpanBatchEncoding): Promise<void> {
    if (batch.count === 0) {
      this.#spare ??= batch;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`span export took longer than ${this.#settings.exportTimeoutMs} ms`)),
        this.#settings.exportTimeoutMs,
      );
    });
    try {
      await Promise.race([this.#exporter.export(batch), timeout]);
    } catch {
      this.failedExports += 1;
    } finally {
      clearTimeout(timer);
    }
    // The export took the batch's request as bytes of its own when it began: delivered, refused or
    // still on its way, the request is not the batch's buffer, which is free to be filled again.
    batch.reset();
    this.#spare ??= batch;
  }

  /** Exports every span still waiting, and waits for the exports in flight. */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#exporting !== undefined || this.#waiting > 0) {
      if (this.#exporting !== undefined) {
        await this.#exporting;
        continue;
      }
      this.#exportOne();
    }
  }

  /** Exports what waits, then stops: spans added afterwards are ignored. */
  async shutdown(): Promise<void> {
    if (this.#isShutDown) return;
    await this.flush();
    this.#isShutDown = true;
    await this.#exporter.shutdown();
  }
}
