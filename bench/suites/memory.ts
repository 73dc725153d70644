/**
 * Benchmark 4: memory.
 *
 * Open streams: `tpx serve` (its own process) in front of an upstream that answers its first requests
 * at once (the warm-up) and every later stream with a one-second pause between chunks. After the
 * warm-up, the proxy's resident set size is read (median of three readings); then many streams are
 * opened at once and held open, and the RSS is read again. The growth divided by the number of
 * streams is the cost of one open stream (target ≤ 64 KB). The report also says how many of the
 * streams had their first event when the RSS was read, and whether the proxy still answers its health
 * check after all of them were cut off.
 *
 * Heap: `heap-exchanges.ts` in its own process with `--expose-gc`: 100,000 `transport.send` then 10,000
 * `transport.stream` exchanges, in-process, against `tpx mock-model`; the heap after a forced collection
 * after each phase, compared with the heap after the warm-up.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, request, type Dispatcher } from 'undici';
import { builtScript, cleanEnv, REPO_ROOT, spawnServer, type ChildServer } from '../harness/children.js';
import { formatBytes, median, round, verdict } from '../harness/stats.js';
import type { Table } from '../harness/table.js';
import { shortPrompt } from '../inputs/conversations.js';
import type { HeapReport } from './heap-exchanges.js';
import { PROVIDERS, type ProviderName } from './proxy.js';

/** The target: each open stream costs the proxy at most this much resident memory. */
export const STREAM_MEMORY_TARGET_BYTES = 64 * 1024;

export interface MemoryOptions {
  /**
   * How many streams to hold open at once, one level after the other; the largest is the one the
   * target is about, the smaller ones stay below the proxy's upstream connection limit.
   */
  streamLevels: number[];
  /** Streaming exchanges before the baseline reading. */
  warmupStreams: number;
  /** In-process exchanges for the heap measurement. */
  sends: number;
  streamExchanges: number;
  /** Pause before each RSS reading, so that the proxy settles, in ms. */
  settleMs: number;
  /**
   * Run the three measurements at the same time (the smoke run: it checks that they work, and their
   * numbers mean little). @default false
   */
  isConcurrent?: boolean;
}

export interface OpenStreamsRow {
  provider: ProviderName;
  streams: number;
  /** Streams whose first event had arrived when the RSS was read. */
  streaming: number;
  baselineRssBytes: number;
  openRssBytes: number;
  /** After every level, once every client went away. */
  afterRssBytes: number;
  bytesPerStream: number;
  /** Only for the largest level. */
  target: number | null;
  /** Within the target, and every stream of the level streaming. */
  met: boolean | null;
  /** Whether `/healthz` answered 200 after the streams were cut off. */
  isHealthyAfter: boolean;
}

export interface HeapRow {
  phase: 'warm-up' | 'sends' | 'streams';
  exchanges: number;
  exchangesPerSecond: number;
  heapUsedBytes: number;
  /** Heap after this phase minus heap after the warm-up. */
  growthBytes: number;
  growthBytesPerExchange: number;
}

export interface MemoryResult {
  openStreams: OpenStreamsRow[];
  heap: HeapRow[];
  tables: Table[];
}

const STREAM_PAUSE_MS = 1000;
const STREAM_WORDS = 80;

async function medianRss(server: ChildServer): Promise<number> {
  const readings: number[] = [];
  for (let reading = 0; reading < 3; reading++) {
    if (reading > 0) await sleep(200);
    readings.push(server.rssBytes());
  }
  return median(readings);
}

/** Starts the upstream that answers `warmup` streams at once, then pauses between chunks. */
async function slowUpstream(
  provider: ProviderName,
  options: MemoryOptions,
  scratch: string,
): Promise<{ mock: ChildServer; env: Record<string, string> }> {
  if (provider === 'anthropic') {
    const mock = await spawnServer({
      script: 'bench/servers/anthropic-mock.ts',
      args: ['--chunk-delay-ms', String(STREAM_PAUSE_MS), '--instant-first', String(options.warmupStreams)],
      env: cleanEnv({}),
    });
    return { mock, env: { ANTHROPIC_API_KEY: 'bench-key', ANTHROPIC_BASE_URL: mock.origin } };
  }
  const text = Array.from({ length: STREAM_WORDS }, (_, index) => `word${index}`).join(' ');
  const script = {
    replies: [
      ...Array.from({ length: options.warmupStreams }, () => ({ text: 'Warm-up answer.' })),
      ...Array.from({ length: options.streamLevels.reduce((sum, count) => sum + count, 0) }, () => ({
        text,
        chunk_delay_ms: STREAM_PAUSE_MS,
      })),
    ],
  };
  mkdirSync(scratch, { recursive: true });
  const scriptPath = join(scratch, 'slow-script.json');
  writeFileSync(scriptPath, JSON.stringify(script));
  const mock = await spawnServer({
    script: 'src/cli.ts',
    args: ['mock-model', '--port', '0', '--script', scriptPath],
    env: cleanEnv({}),
  });
  return { mock, env: { TPX_OAUTH_TOKEN: 'bench-token', TPX_BASE_URL: mock.url } };
}

/** Opens `count` streams through the proxy, reads its RSS while they are open, then cuts them all off. */
async function holdStreams(
  serve: ChildServer,
  target: Dispatcher.RequestOptions,
  count: number,
  options: MemoryOptions,
): Promise<{ idleRssBytes: number; openRssBytes: number; streaming: number }> {
  const idleRssBytes = await medianRss(serve);
  const pool = new Pool(serve.origin, { connections: count, pipelining: 1 });
  let streaming = 0;
  const readers = Array.from({ length: count }, async () => {
    const response = await pool.request(target);
    let isFirst = true;
    for await (const _chunk of response.body) {
      if (isFirst) streaming++;
      isFirst = false;
    }
  });
  const settled = Promise.allSettled(readers);
  // Wait until every stream is streaming, or the count stops growing for two seconds.
  let lastCount = -1;
  let stableSince = Date.now();
  const giveUpAt = Date.now() + 30_000;
  while (streaming < count && Date.now() < giveUpAt && Date.now() - stableSince < 2_000) {
    await sleep(100);
    if (streaming !== lastCount) {
      lastCount = streaming;
      stableSince = Date.now();
    }
  }
  const openRssBytes = await medianRss(serve);
  const streamingAtReading = streaming;
  await pool.destroy();
  await settled;
  await sleep(options.settleMs);
  return { idleRssBytes, openRssBytes, streaming: streamingAtReading };
}

async function openStreams(
  provider: ProviderName,
  options: MemoryOptions,
  scratch: string,
): Promise<OpenStreamsRow[]> {
  const { mock, env } = await slowUpstream(provider, options, scratch);
  const servers: ChildServer[] = [mock];
  try {
    const serve = await spawnServer({
      script: 'src/cli.ts',
      args: ['serve', '--port', '0'],
      env: cleanEnv(env),
      discardStdout: true,
    });
    servers.unshift(serve);
    const target: Dispatcher.RequestOptions = {
      method: 'POST',
      path: '/v1/messages',
      headers: {
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'x-api-key': 'unused',
      },
      body: JSON.stringify(shortPrompt({ stream: true })),
    };

    const warmupPool = new Pool(serve.origin, { connections: 16 });
    let sent = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (sent < options.warmupStreams) {
          sent++;
          const response = await warmupPool.request(target);
          await response.body.text();
          if (response.statusCode !== 200)
            throw new Error(`${provider} warm-up stream: status ${response.statusCode}`);
        }
      }),
    );
    await warmupPool.close();
    await sleep(options.settleMs);

    const rows: OpenStreamsRow[] = [];
    for (const count of options.streamLevels) {
      const held = await holdStreams(serve, target, count, options);
      const bytesPerStream = (held.openRssBytes - held.idleRssBytes) / count;
      const isTargetLevel = count === Math.max(...options.streamLevels);
      rows.push({
        provider,
        streams: count,
        streaming: held.streaming,
        baselineRssBytes: held.idleRssBytes,
        openRssBytes: held.openRssBytes,
        afterRssBytes: Number.NaN,
        bytesPerStream: round(bytesPerStream),
        target: isTargetLevel ? STREAM_MEMORY_TARGET_BYTES : null,
        // The target is about streams that are open and streaming: a level where some requests are
        // still queued inside the proxy, waiting for an upstream connection, does not meet it.
        met: isTargetLevel ? bytesPerStream <= STREAM_MEMORY_TARGET_BYTES && held.streaming === count : null,
        isHealthyAfter: false,
      });
    }
    const afterRssBytes = await medianRss(serve);
    const health = await request(`${serve.origin}/healthz`);
    await health.body.text();
    for (const row of rows) {
      row.afterRssBytes = afterRssBytes;
      row.isHealthyAfter = health.statusCode === 200;
    }
    return rows;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

async function heapExchanges(options: MemoryOptions): Promise<HeapRow[]> {
  const mock = await spawnServer({
    script: 'src/cli.ts',
    args: ['mock-model', '--port', '0'],
    env: cleanEnv({}),
  });
  try {
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        builtScript('bench/suites/heap-exchanges.ts'),
        mock.url,
        String(options.sends),
        String(options.streamExchanges),
      ],
      { cwd: REPO_ROOT, env: cleanEnv({}), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`heap-exchanges failed (${code}):\n${stderr}`);
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as HeapReport;
    const base = report.warmup.heapUsedBytes;
    const row = (phase: HeapRow['phase'], data: HeapReport['warmup']): HeapRow => ({
      phase,
      exchanges: data.exchanges,
      exchangesPerSecond: round(data.exchanges / data.seconds),
      heapUsedBytes: data.heapUsedBytes,
      growthBytes: data.heapUsedBytes - base,
      growthBytesPerExchange: round((data.heapUsedBytes - base) / data.exchanges, 3),
    });
    return [row('warm-up', report.warmup), row('sends', report.sends), row('streams', report.streams)];
  } finally {
    await mock.stop();
  }
}

/** `met`, `NOT MET`, or why the level cannot meet the target although its bytes per stream would. */
function streamsVerdict(row: OpenStreamsRow): string {
  if (row.target === null) return '(info)';
  const byBytes = verdict(row.bytesPerStream, { max: row.target });
  if (row.streaming < row.streams) return `NOT MET: only ${row.streaming} of ${row.streams} streaming`;
  return byBytes;
}

/** Runs benchmark 4. */
export async function runMemory(options: MemoryOptions): Promise<MemoryResult> {
  const scratch = mkdtempSync(join(tmpdir(), 'tpx-bench-'));
  try {
    let openStreamRows: OpenStreamsRow[] = [];
    let heap: HeapRow[];
    if (options.isConcurrent === true) {
      const [rows, heapRows] = await Promise.all([
        Promise.all(PROVIDERS.map((provider) => openStreams(provider, options, join(scratch, provider)))),
        heapExchanges(options),
      ]);
      openStreamRows = rows.flat();
      heap = heapRows;
    } else {
      for (const provider of PROVIDERS) {
        openStreamRows.push(...(await openStreams(provider, options, join(scratch, provider))));
      }
      heap = await heapExchanges(options);
    }
    const streamsTable: Table = {
      title: 'Memory: concurrent open streams through tpx serve (RSS of the proxy process)',
      header: [
        'provider',
        'open',
        'streaming',
        'RSS idle',
        'RSS open',
        'per stream',
        'target ≤ 64 KiB',
        'RSS at the end',
        'healthy at the end',
      ],
      rows: openStreamRows.map((row) => [
        row.provider,
        String(row.streams),
        String(row.streaming),
        formatBytes(row.baselineRssBytes),
        formatBytes(row.openRssBytes),
        formatBytes(row.bytesPerStream),
        streamsVerdict(row),
        formatBytes(row.afterRssBytes),
        row.isHealthyAfter ? 'yes' : 'NO',
      ]),
      notes: [
        'open: requests in flight through the proxy; streaming: of those, the ones whose first event had arrived',
        'when the RSS was read. per stream: (RSS open − RSS idle) / open. RSS idle is read just before each level;',
        'the end: after the last level, once every client had disconnected.',
      ],
    };
    const heapTable: Table = {
      title:
        'Memory: heap after in-process exchanges (tpx provider, transport against tpx mock-model, after gc)',
      header: ['phase', 'exchanges', 'exchanges/s', 'heap used', 'growth since warm-up', 'per exchange'],
      rows: heap.map((row) => [
        row.phase,
        String(row.exchanges),
        row.exchangesPerSecond.toFixed(0),
        formatBytes(row.heapUsedBytes),
        row.phase === 'warm-up' ? '' : formatBytes(row.growthBytes),
        row.phase === 'warm-up' ? '' : `${row.growthBytesPerExchange} B`,
      ]),
      notes: [
        'Heap read after four forced collections (node --expose-gc). No growth with the count = no leak.',
      ],
    };
    return { openStreams: openStreamRows, heap, tables: [streamsTable, heapTable] };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
