/**
 * What the span export loses, counted for the Prometheus metrics (`tpx_trace_spans_dropped_total`,
 * `tpx_trace_exports_failed_total`): a collector that is away or slow loses traces, and an operator
 * should see it on the same dashboard as the rest.
 *
 * The SDK's `BatchSpanProcessor` reports neither as a number anyone can read: it drops spans when its
 * queue is full and says so only in a debug line and in its self-observability counter
 * (`otel.sdk.processor.span.processed` with `error.type` `queue_full`, on the meter provider it is
 * given as `selfObsMeterProvider`), and the result of each export goes only to its own callback. So this
 * is that meter provider, keeping the dropped spans of that one counter (every other instrument is the
 * API's no-op), and a wrapper of the exporter that counts the exports that failed. Loaded with the SDK,
 * only when traces are exported.
 *
 * @module
 */
import {
  createNoopMeter,
  type Counter,
  type Meter,
  type MeterProvider,
  type MetricAttributes,
  type MetricOptions,
} from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** The processor's self-observability counter of the spans it is done with, by outcome. */
const PROCESSED_SPANS = 'otel.sdk.processor.span.processed';

/** What the span export has lost so far. */
export interface SpanExportLosses {
  /** Finished spans dropped because the export queue was full (`OTEL_BSP_MAX_QUEUE_SIZE`). */
  readonly droppedSpans: number;
  /** Exports (batches of spans) that could not be delivered: refused, collector away, or too slow. */
  readonly failedExports: number;
}

/** Counts the losses of one span pipeline; see the module comment. */
export class SpanExportLossCounter implements SpanExportLosses, MeterProvider {
  droppedSpans = 0;
  failedExports = 0;
  readonly #meter: Meter;

  constructor() {
    const noop = createNoopMeter();
    const counter = <A extends MetricAttributes>(name: string, options?: MetricOptions): Counter<A> =>
      name !== PROCESSED_SPANS
        ? noop.createCounter<A>(name, options)
        : {
            add: (value, attributes) => {
              if (attributes?.['error.type'] === 'queue_full') this.droppedSpans += value;
            },
          };
    this.#meter = {
      createCounter: counter,
      createGauge: (name, options) => noop.createGauge(name, options),
      createHistogram: (name, options) => noop.createHistogram(name, options),
      createUpDownCounter: (name, options) => noop.createUpDownCounter(name, options),
      createObservableGauge: (name, options) => noop.createObservableGauge(name, options),
      createObservableCounter: (name, options) => noop.createObservableCounter(name, options),
      createObservableUpDownCounter: (name, options) => noop.createObservableUpDownCounter(name, options),
      addBatchObservableCallback: () => {},
      removeBatchObservableCallback: () => {},
    };
  }

  /** As the processor's `selfObsMeterProvider`. */
  getMeter(): Meter {
    return this.#meter;
  }

  /** `exporter`, counting each export whose result is not a success. */
  countFailures(exporter: SpanExporter): SpanExporter {
    return {
      export: (spans: ReadableSpan[], done: (result: ExportResult) => void) =>
        exporter.export(spans, (result) => {
          if (result.code !== ExportResultCode.SUCCESS) this.failedExports += 1;
          done(result);
        }),
      shutdown: () => exporter.shutdown(),
      forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
    };
  }
}
