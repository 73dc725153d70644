/**
 * How finished spans wait and leave (`OTEL_BSP_*` semantics): a full batch leaves at once, a partial one
 * after the schedule delay, one export at a time, a full queue drops (and counts) what does not fit, a
 * failed or stuck export is counted and the next batch still goes, and flush and shutdown leave nothing
 * behind. The exporter here is a recorder that encodes as the real one does (JSON) and can be held back.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { newSpanBatch, type SpanBatchEncoding } from '../../src/server/otlp-trace-encoding.js';
import { newTraceId, RecordedSpan, SPAN_KIND_SERVER } from '../../src/server/recorded-span.js';
import { SpanBatches, type SpanBatchExporter } from '../../src/server/span-batches.js';
import type { SpanBatchSettings } from '../../src/server/tracing.js';

interface Recorder extends SpanBatchExporter {
  /** The span names of each batch exported, in order. */
  readonly batches: string[][];
  /** Exports started and not yet answered. */
  readonly pending: { resolve: () => void; reject: (error: Error) => void }[];
  isShutDown: boolean;
}

/** An exporter that records each batch and answers it at once, or only when told (`hold`). */
function recorder(hold = false): Recorder {
  const batches: string[][] = [];
  const pending: Recorder['pending'] = [];
  const exporter: Recorder = {
    batches,
    pending,
    isShutDown: false,
    newBatch: (expected) =>
      newSpanBatch('http/json', { resourceAttributes: [], scopeName: 'tpx-transport' }, expected),
    export(batch: SpanBatchEncoding) {
      const body = JSON.parse(Buffer.from(batch.request()).toString('utf8')) as {
        resourceSpans: { scopeSpans: { spans: { name: string }[] }[] }[];
      };
      batches.push(body.resourceSpans[0]!.scopeSpans[0]!.spans.map((span) => span.name));
      if (!hold) return Promise.resolve();
      return new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
    },
    shutdown() {
      exporter.isShutDown = true;
      return Promise.resolve();
    },
  };
  return exporter;
}

function span(name: string): RecordedSpan {
  const recorded = new RecordedSpan(newTraceId(), undefined, name, SPAN_KIND_SERVER);
  recorded.endMs = recorded.startMs;
  return recorded;
}

function settings(overrides: Partial<SpanBatchSettings>): SpanBatchSettings {
  return {
    scheduleDelayMs: 60_000,
    exportTimeoutMs: 30_000,
    maxQueueSize: 100,
    maxExportBatchSize: 10,
    ...overrides,
  };
}

/** Waits until `condition` holds, polling, for at most two seconds. */
async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 2000) throw new Error('the condition did not come true within 2 s');
    await sleep(5);
  }
}

describe('span batches', () => {
  it('export a batch as soon as it is full, long before the schedule delay, and keep the rest waiting', async () => {
    const exporter = recorder();
    const batches = new SpanBatches(settings({ maxExportBatchSize: 3 }), exporter);
    for (const name of ['a', 'b', 'c', 'd']) batches.add(span(name));
    await until(() => exporter.batches.length === 1);
    await sleep(20);
    expect(exporter.batches).toStrictEqual([['a', 'b', 'c']]);
    await batches.flush();
    expect(exporter.batches).toStrictEqual([['a', 'b', 'c'], ['d']]);
  });

  it('with batches larger than a run of encoding, still export each as soon as it is full, in order', async () => {
    const exporter = recorder();
    // 50 spans a batch: not a multiple of the spans encoded together, so a batch fills mid-run.
    const batches = new SpanBatches(settings({ maxQueueSize: 1000, maxExportBatchSize: 50 }), exporter);
    const names = Array.from({ length: 120 }, (_, index) => `s${index}`);
    for (const name of names) batches.add(span(name));
    await until(() => exporter.batches.length === 2);
    await sleep(20);
    expect(exporter.batches).toStrictEqual([names.slice(0, 50), names.slice(50, 100)]);
    await batches.flush();
    expect(exporter.batches).toStrictEqual([names.slice(0, 50), names.slice(50, 100), names.slice(100)]);
  });

  it('count spans not yet encoded as queued, dropping what finds the queue full', async () => {
    const exporter = recorder();
    const batches = new SpanBatches(settings({ maxQueueSize: 40, maxExportBatchSize: 512 }), exporter);
    const names = Array.from({ length: 45 }, (_, index) => `s${index}`);
    for (const name of names) batches.add(span(name));
    expect(batches.droppedSpans).toBe(5);
    await batches.flush();
    expect(exporter.batches).toStrictEqual([names.slice(0, 40)]);
  });

  it('drop and count a span that cannot be encoded, and export the others around it', async () => {
    const exporter = recorder();
    const batches = new SpanBatches(settings({}), exporter);
    const broken = span('broken');
    broken.attributes.push('tpx.bad', {} as unknown as string);
    for (const each of [span('a'), broken, span('b')]) batches.add(each);
    await batches.flush();
    expect(exporter.batches).toStrictEqual([['a', 'b']]);
    expect(batches.droppedSpans).toBe(1);
    // The queue's count is right: a later span still leaves on flush, nothing is waited for in vain.
    batches.add(span('c'));
    await batches.flush();
    expect(exporter.batches).toStrictEqual([['a', 'b'], ['c']]);
  });

  it('export a partial batch once the schedule delay has passed since its first span', async () => {
    const exporter = recorder();
    const batches = new SpanBatches(settings({ scheduleDelayMs: 30 }), exporter);
    batches.add(span('a'));
    batches.add(span('b'));
    expect(exporter.batches).toStrictEqual([]);
    await until(() => exporter.batches.length === 1);
    expect(exporter.batches).toStrictEqual([['a', 'b']]);
  });

  it('send one batch at a time, the next once the one in flight is answered', async () => {
    const exporter = recorder(true);
    const batches = new SpanBatches(settings({ maxExportBatchSize: 2 }), exporter);
    for (const name of ['a', 'b', 'c', 'd', 'e']) batches.add(span(name));
    await sleep(20);
    expect(exporter.batches).toStrictEqual([['a', 'b']]);
    exporter.pending.shift()!.resolve();
    await until(() => exporter.batches.length === 2);
    expect(exporter.batches[1]).toStrictEqual(['c', 'd']);
  });

  it('drop and count the spans that find the queue full, keeping those already queued', async () => {
    const exporter = recorder(true);
    const batches = new SpanBatches(settings({ maxQueueSize: 4, maxExportBatchSize: 2 }), exporter);
    // The first batch leaves at once and is held; four more fill the queue; two find it full.
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) batches.add(span(name));
    expect(batches.droppedSpans).toBe(2);
    exporter.pending.shift()!.resolve();
    await until(() => exporter.batches.length === 2);
    exporter.pending.shift()!.resolve();
    await until(() => exporter.batches.length === 3);
    exporter.pending.shift()!.resolve();
    await batches.flush();
    expect(exporter.batches).toStrictEqual([
      ['a', 'b'],
      ['c', 'd'],
      ['e', 'f'],
    ]);
  });

  it('count a refused export and a stuck one as failed, and still send the next batch', async () => {
    const exporter = recorder(true);
    const batches = new SpanBatches(settings({ maxExportBatchSize: 1, exportTimeoutMs: 40 }), exporter);
    batches.add(span('refused'));
    batches.add(span('stuck'));
    batches.add(span('delivered'));
    exporter.pending.shift()!.reject(new Error('503 from the collector'));
    await until(() => exporter.batches.length === 2);
    // The second export is never answered: after its timeout the third goes.
    await until(() => exporter.batches.length === 3);
    expect(batches.failedExports).toBe(2);
    exporter.pending.at(-1)!.resolve();
    await batches.flush();
    expect(exporter.batches).toStrictEqual([['refused'], ['stuck'], ['delivered']]);
    expect(batches.failedExports).toBe(2);
  });

  it('on shutdown export everything waiting, stop the exporter, and ignore spans added afterwards', async () => {
    const exporter = recorder();
    const batches = new SpanBatches(settings({ maxExportBatchSize: 2 }), exporter);
    for (const name of ['a', 'b', 'c']) batches.add(span(name));
    await batches.shutdown();
    expect(exporter.batches).toStrictEqual([['a', 'b'], ['c']]);
    expect(exporter.isShutDown).toBe(true);
    batches.add(span('late'));
    await batches.flush();
    expect(exporter.batches).toHaveLength(2);
  });

  it('fill a batch again once its export is over, delivered, refused or timed out, instead of making a new one', async () => {
    const exporter = recorder(true);
    const made: SpanBatchEncoding[] = [];
    const exported: SpanBatchEncoding[] = [];
    const counting: SpanBatchExporter = {
      newBatch(expected) {
        const batch = exporter.newBatch(expected);
        made.push(batch);
        return batch;
      },
      export(batch) {
        exported.push(batch);
        return exporter.export(batch);
      },
      shutdown: () => exporter.shutdown(),
    };
    const batches = new SpanBatches(settings({ maxExportBatchSize: 1, exportTimeoutMs: 40 }), counting);
    // Each export is answered (or times out) before the next span comes.
    batches.add(span('delivered'));
    exporter.pending.shift()!.resolve();
    await batches.flush();
    batches.add(span('refused'));
    exporter.pending.shift()!.reject(new Error('503 from the collector'));
    await batches.flush();
    batches.add(span('stuck'));
    await batches.flush();
    batches.add(span('last'));
    exporter.pending.at(-1)!.resolve();
    await batches.flush();
    expect(exporter.batches).toStrictEqual([['delivered'], ['refused'], ['stuck'], ['last']]);
    // Two batches in all: the one exported and the one being filled meanwhile, which take turns. The
    // refused and the stuck ones were filled again as the delivered one was.
    const [delivered, refused, stuck, last] = exported;
    expect(made).toHaveLength(2);
    expect(stuck).toBe(delivered);
    expect(last).toBe(refused);
    expect(refused).not.toBe(delivered);
  });
});
