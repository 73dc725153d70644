/**
 * What the SDK's batch span processor loses reaches tpx's counters: spans it drops because its queue is
 * full (reported only through its self-observability meter, `selfObsMeterProvider`) and exports the
 * exporter reports failed, with the SDK's own `BatchSpanProcessor` and `BasicTracerProvider`.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { SpanExportLossCounter } from '../../src/telemetry/span-export-losses.js';

/** An exporter that answers each export only when the test says so. */
function heldExporter() {
  const waiting: { spans: ReadableSpan[]; answer: (result: ExportResult) => void }[] = [];
  const exporter: SpanExporter = {
    export: (spans, answer) => waiting.push({ spans, answer }),
    shutdown: () => Promise.resolve(),
  };
  return { exporter, waiting };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('SpanExportLossCounter', () => {
  it('counts the spans a full queue drops and the exports that failed, and nothing for those delivered', async () => {
    const losses = new SpanExportLossCounter();
    const held = heldExporter();
    const options = {
      maxQueueSize: 2,
      maxExportBatchSize: 1,
      scheduledDelayMillis: 60_000,
      selfObsMeterProvider: losses,
    };
    const provider = new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(losses.countFailures(held.exporter), options)],
    });
    const tracer = provider.getTracer('losses-test');
    // The first span leaves at once (a full batch of one) and its export is held; two more fill the
    // queue, and the last two find it full.
    for (const name of ['first', 'second', 'third', 'fourth', 'fifth']) tracer.startSpan(name).end();
    expect([losses.droppedSpans, losses.failedExports]).toStrictEqual([2, 0]);

    held.waiting.shift()!.answer({ code: ExportResultCode.FAILED, error: new Error('collector refused') });
    await settle();
    expect([losses.droppedSpans, losses.failedExports]).toStrictEqual([2, 1]);
    // The next batch went out once the first export was over; delivered, it counts as no loss.
    expect(held.waiting.map((each) => each.spans.map((span) => span.name))).toStrictEqual([['second']]);
    held.waiting.shift()!.answer({ code: ExportResultCode.SUCCESS });
    await settle();
    expect([losses.droppedSpans, losses.failedExports]).toStrictEqual([2, 1]);

    const stopped = provider.shutdown();
    await settle();
    for (const each of held.waiting.splice(0)) each.answer({ code: ExportResultCode.SUCCESS });
    await stopped;
    expect([losses.droppedSpans, losses.failedExports]).toStrictEqual([2, 1]);
  });
});
