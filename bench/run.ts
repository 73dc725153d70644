/**
 * `npm run bench`: every benchmark of the transport in one run, side by side, printed as tables and
 * written to `bench/results.json` (medians and ratios; see `docs/performance.md` for the method).
 *
 * ```
 * npm run bench                      # the full run (a few minutes on 2 cores), writes bench/results.json
 * npm run bench:smoke                # every benchmark, briefly: checks they still run; writes nothing
 * npx tsx bench/run.ts --only proxy,memory
 * npx tsx bench/run.ts --only proxy --cpu-prof-dir /tmp/prof   # profile the relays while they are measured
 * npx tsx bench/report.ts            # bench/results.json as Markdown tables
 * ```
 *
 * Options: `--smoke`; `--only <suites>` (comma-separated: translation, stream, proxy, memory, workers,
 * observability);
 * `--out <file>` (default `bench/results.json` for a full run of every suite, else nothing);
 * `--cpu-prof-dir <dir>` (run `tpx serve` and the pass-through with `node --cpu-prof`; the profiles,
 * `<provider>-serve.cpuprofile` and `<provider>-pass-through.cpuprofile`, are written there on exit;
 * with the observability suite, each fleet's `tpx serve` processes as
 * `observability-<variant>-round-<n>.cpuprofile`).
 *
 * Nothing here is a test: no number fails the run. The run fails only when a benchmark cannot do its
 * work (a translation that produces the wrong thing, a proxy that answers an error).
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatBytes, formatRatio, round, verdict } from './harness/stats.js';
import { renderText, type Table } from './harness/table.js';
import { runMemory, STREAM_MEMORY_TARGET_BYTES, type MemoryResult } from './suites/memory.js';
import { PROXY_TARGETS, runProxy, type ProxyResult } from './suites/proxy.js';
import {
  OBSERVABILITY_ADDED_CPU_TARGET_MS,
  runObservability,
  type ObservabilityResult,
} from './suites/observability.js';
import { CHUNK_TARGET, runStream, type StreamResult } from './suites/stream.js';
import { runTranslation, TRANSLATION_TARGET, type TranslationResult } from './suites/translation.js';
import { runWorkers, type WorkersResult } from './suites/workers.js';

const SUITES = ['translation', 'stream', 'proxy', 'memory', 'workers', 'observability'] as const;
type Suite = (typeof SUITES)[number];

/** Largest heap growth over the in-process exchanges that still counts as "no leak". */
const HEAP_GROWTH_LIMIT_BYTES = 1024 * 1024;

const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
    'cpu-prof-dir': { type: 'string' },
  },
});
const isSmoke = values.smoke;
const only = new Set<Suite>(
  (values.only ?? SUITES.join(',')).split(',').map((name) => {
    const suite = name.trim() as Suite;
    if (!SUITES.includes(suite))
      throw new Error(`--only: unknown suite "${name}" (one of ${SUITES.join(', ')})`);
    return suite;
  }),
);
const outPath =
  values.out ??
  (isSmoke || values.only !== undefined
    ? undefined
    : fileURLToPath(new URL('results.json', import.meta.url)));

/** Sizes and durations: the full run, and a smoke run of a few seconds that exercises the same code. */
const CONFIG = isSmoke
  ? {
      translation: { rounds: 2, batchMs: 1, warmupMs: 0 },
      stream: {
        sizes: [100, 1_000, 10_000],
        rounds: { rounds: 1, batchMs: 1, warmupMs: 0 },
      },
      proxy: { rounds: 1, warmupMs: 20, durationMs: 80 },
      memory: {
        streamLevels: [10, 40],
        warmupStreams: 20,
        sends: 400,
        streamExchanges: 100,
        settleMs: 100,
        isConcurrent: true,
      },
      workers: { rounds: 1, warmupMs: 20, durationMs: 80 }, // not run: see below
      observability: {
        closedLoop: { rounds: 1, warmupMs: 20, durationMs: 80 },
        fixedRate: { rounds: 1, warmupMs: 20, durationMs: 80, rateFraction: 0.5, maxInFlight: 64 },
        idleMs: 100,
        scrapes: 2,
      },
    }
  : {
      translation: { rounds: 40, batchMs: 20, warmupMs: 200 },
      stream: {
        sizes: [1_000, 10_000, 100_000],
        rounds: { rounds: 12, batchMs: 20, warmupMs: 100 },
      },
      proxy: { rounds: 5, warmupMs: 300, durationMs: 1_500 },
      memory: {
        streamLevels: [100, 1_000],
        warmupStreams: 200,
        sends: 100_000,
        streamExchanges: 5_000,
        settleMs: 1_000,
      },
      workers: { rounds: 5, warmupMs: 300, durationMs: 1_500 },
      observability: {
        // The closed loops are informational and set the fixed rate; the target is judged at the rate.
        closedLoop: { rounds: 3, warmupMs: 300, durationMs: 1_000 },
        // Fleet rounds: fresh processes of every variant, loaded at the same time (see the suite), each
        // warmed up to a process in service's CPU per request before it is measured.
        fixedRate: {
          rounds: 9,
          warmupMs: 1_500,
          warmupRequests: 3_000,
          durationMs: 3_000,
          minMeasuredRequests: 1_000,
          rateFraction: 0.4,
          maxInFlight: 64,
        },
        idleMs: 3_000,
        scrapes: 20,
      },
    };

interface TargetRow {
  benchmark: string;
  measure: string;
  value: string;
  target: string;
  met: boolean;
  /** Why the value is not held against the target (a run that did not get the traffic asked for). */
  notJudged?: string;
}

const startedAt = Date.now();
const loadAtStart = loadavg();
const seconds: Partial<Record<Suite, number>> = {};
const tables: Table[] = [];
const targets: TargetRow[] = [];
let translation: TranslationResult | undefined;
let stream: StreamResult | undefined;
let proxy: ProxyResult | undefined;
let memory: MemoryResult | undefined;
let workers: WorkersResult | undefined;
let observability: ObservabilityResult | undefined;

function show(newTables: Table[]): void {
  for (const table of newTables) {
    tables.push(table);
    process.stdout.write(`\n${renderText(table)}`);
  }
}

async function timed<T>(suite: Suite, run: () => T | Promise<T>): Promise<T> {
  process.stderr.write(`\n[bench] ${suite}${isSmoke ? ' (smoke)' : ''}…\n`);
  const suiteStart = Date.now();
  const result = await run();
  seconds[suite] = round((Date.now() - suiteStart) / 1000, 3);
  return result;
}

if (only.has('translation')) {
  translation = await timed('translation', () => runTranslation(CONFIG.translation));
  show([translation.table]);
  for (const row of translation.rows) {
    if (row.target === null) continue;
    targets.push({
      benchmark: 'translation',
      measure: `${row.path} ${row.size}: translation / floor`,
      value: formatRatio(row.ratio),
      target: `≤ ${TRANSLATION_TARGET}×`,
      met: row.met === true,
    });
  }
}

if (only.has('stream')) {
  stream = await timed('stream', () => runStream(CONFIG.stream.sizes, CONFIG.stream.rounds));
  show(stream.tables);
  for (const row of stream.rows) {
    targets.push({
      benchmark: 'stream',
      measure: `${row.shape} ${row.deltas}: translation / floor, per chunk`,
      value: formatRatio(row.ratio),
      target: `≤ ${CHUNK_TARGET}×`,
      met: row.ratio <= CHUNK_TARGET,
    });
  }
  for (const row of stream.scaling) {
    targets.push({
      benchmark: 'stream',
      measure: `${row.shape}: time(${row.to}) / time(${row.from})`,
      value: formatRatio(row.translationScaling),
      target: `≤ ${row.target}×`,
      met: row.met,
    });
  }
}

if (only.has('proxy')) {
  proxy = await timed('proxy', () => runProxy({ ...CONFIG.proxy, cpuProfileDir: values['cpu-prof-dir'] }));
  show(proxy.tables);
  for (const ratio of proxy.ratios) {
    targets.push(
      {
        benchmark: 'proxy',
        measure: `${ratio.provider}: added p50 latency vs pass-through, c=1`,
        value: formatRatio(ratio.addedLatencyRatio),
        target: `≤ ${PROXY_TARGETS.addedLatencyRatio}×`,
        met: verdict(ratio.addedLatencyRatio, { max: PROXY_TARGETS.addedLatencyRatio }) === 'met',
      },
      {
        benchmark: 'proxy',
        measure: `${ratio.provider}: throughput vs pass-through, c=16`,
        value: formatRatio(ratio.throughputRatio),
        target: `≥ ${PROXY_TARGETS.throughputRatio}×`,
        met: verdict(ratio.throughputRatio, { min: PROXY_TARGETS.throughputRatio }) === 'met',
      },
      {
        benchmark: 'proxy',
        measure: `${ratio.provider}: streaming first byte p50 vs pass-through, c=16`,
        value: formatRatio(ratio.firstByteRatio),
        target: `≤ ${PROXY_TARGETS.firstByteRatio}×`,
        met: verdict(ratio.firstByteRatio, { max: PROXY_TARGETS.firstByteRatio }) === 'met',
      },
    );
  }
}

if (only.has('memory')) {
  memory = await timed('memory', () => runMemory(CONFIG.memory));
  show(memory.tables);
  for (const row of memory.openStreams) {
    if (row.met === null) continue;
    targets.push({
      benchmark: 'memory',
      measure: `${row.provider}: RSS per open stream, ${row.streams} open (${row.streaming} streaming)`,
      value: formatBytes(row.bytesPerStream),
      target: `≤ ${formatBytes(STREAM_MEMORY_TARGET_BYTES)}`,
      met: row.met,
    });
  }
  for (const row of memory.heap) {
    if (row.phase === 'warm-up') continue;
    targets.push({
      benchmark: 'memory',
      measure: `heap growth after ${row.exchanges} ${row.phase === 'sends' ? 'send' : 'stream'} exchanges`,
      value: formatBytes(row.growthBytes),
      target: `≤ ${formatBytes(HEAP_GROWTH_LIMIT_BYTES)} (no leak)`,
      met: row.growthBytes <= HEAP_GROWTH_LIMIT_BYTES,
    });
  }
}

if (only.has('workers')) {
  if (isSmoke) {
    // Two tpx serve trees (a primary and two workers, and a single process) take several seconds of
    // CPU just to start: too long for a check that runs with every `npm test`.
    process.stdout.write(
      '\nWorkers: skipped in a smoke run (it starts a cluster); run `npx tsx bench/run.ts --only workers`.\n',
    );
  } else {
    workers = await timed('workers', () => runWorkers(CONFIG.workers));
    show(workers.tables);
  }
}

if (only.has('observability')) {
  observability = await timed('observability', () =>
    runObservability({ ...CONFIG.observability, cpuProfileDir: values['cpu-prof-dir'] }),
  );
  show(observability.tables);
  for (const ratio of observability.ratios) {
    if (ratio.variant !== 'metrics + tracing') continue;
    targets.push({
      benchmark: 'observability',
      measure: `CPU added per exchange, metrics + tracing on − off, ${ratio.load} (fixed rate)`,
      value: `${ratio.addedCpuMs.toFixed(3)} ms (${formatRatio(ratio.cpuRatio)} off)${ratio.sameTraffic ? '' : ' ⚠ not the same traffic'}`,
      target: `≤ ${OBSERVABILITY_ADDED_CPU_TARGET_MS} ms`,
      met: ratio.sameTraffic && ratio.addedCpuMs <= OBSERVABILITY_ADDED_CPU_TARGET_MS,
      ...(ratio.sameTraffic ? {} : { notJudged: 'not judged: not the same traffic' }),
    });
  }
}

const summary: Table = {
  title: 'Targets',
  header: ['benchmark', 'measure', 'value', 'target', 'verdict'],
  rows: targets.map((row) => [
    row.benchmark,
    row.measure,
    row.value,
    row.target,
    isSmoke ? '(smoke: not judged)' : (row.notJudged ?? (row.met ? 'met' : 'NOT MET')),
  ]),
  notes: isSmoke
    ? ['A smoke run is too short and too small for these numbers to mean anything; run `npm run bench`.']
    : [],
};
show([summary]);

const totalSeconds = round((Date.now() - startedAt) / 1000, 3);
process.stdout.write(
  `\n${isSmoke ? 'Smoke run' : 'Run'} took ${totalSeconds} s (${Object.entries(seconds)
    .map(([suite, value]) => `${suite} ${value} s`)
    .join(
      ', ',
    )}); load average ${loadAtStart.map((value) => value.toFixed(1)).join(' ')} at start, ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')} at the end.\n`,
);

if (outPath !== undefined) {
  const results = {
    generatedAt: new Date().toISOString(),
    smoke: isSmoke,
    environment: {
      node: process.version,
      platform: `${platform()} ${process.arch}`,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryBytes: totalmem(),
      loadAverageAtStart: loadAtStart.map((value) => round(value, 3)),
      loadAverageAtEnd: loadavg().map((value) => round(value, 3)),
    },
    seconds: { ...seconds, total: totalSeconds },
    config: CONFIG,
    targets,
    translation: translation?.rows,
    stream:
      stream === undefined ? undefined : { sizes: stream.sizes, rows: stream.rows, scaling: stream.scaling },
    proxy: proxy === undefined ? undefined : { ratios: proxy.ratios, rows: proxy.rows },
    memory: memory === undefined ? undefined : { openStreams: memory.openStreams, heap: memory.heap },
    workers: workers === undefined ? undefined : { ratios: workers.ratios, rows: workers.rows },
    observability:
      observability === undefined
        ? undefined
        : {
            rates: observability.rates,
            ratios: observability.ratios,
            rows: observability.rows,
            fixed: observability.fixed,
            received: observability.received,
          },
    tables,
  };
  writeFileSync(outPath, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`Results written to ${outPath}\n`);
}
