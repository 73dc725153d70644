/**
 * Benchmark 5: all cores. `tpx serve --workers 1` (one process, the default) against
 * `tpx serve --workers 2` (a primary and two workers sharing the port through `node:cluster`), both in
 * front of the same `tpx mock-model` (tpx provider, a Messages request translated to Chat Completions
 * and back), side by side in rotating order, for a few rounds. Reported: each one's throughput, the
 * ratio two workers / one per round and its median, and the CPU time per request of the whole process
 * tree (primary and workers), which says what the second worker costs.
 *
 * The load generator and the upstream run on the same machine: on 2 cores the three share them, so
 * the ratio says how much a second worker helps when the proxy is not alone, not what it gives on a
 * machine of its own. "direct" (the load generator straight to the upstream, with the Chat Completions
 * body `tpx serve` would send) shows the ceiling the upstream and the load generator leave.
 *
 * @module
 */
import { translateRequest } from '../../src/translate/translate-request.js';
import { cleanEnv, spawnServer, START_TIMEOUT_MS, type ChildServer } from '../harness/children.js';
import type { LoadTarget } from '../harness/load.js';
import { threadCpuMs, treeCpuMs } from '../harness/process-cpu.js';
import { formatDuration, formatRatio, median, round } from '../harness/stats.js';
import type { Table } from '../harness/table.js';
import {
  medianOf,
  perRoundRatios,
  runVariants,
  type Variant,
  type VariantLoad,
} from '../harness/variants.js';
import { shortPrompt } from '../inputs/conversations.js';

export interface WorkersOptions {
  rounds: number;
  warmupMs: number;
  durationMs: number;
}

const LOADS: readonly VariantLoad[] = [
  { name: 'json c=16', connections: 16, stream: false },
  { name: 'json c=64', connections: 64, stream: false },
  { name: 'stream c=16', connections: 16, stream: true },
];
const VARIANTS = ['direct', 'workers 1', 'workers 2'] as const;

export interface WorkersRow {
  load: string;
  variant: string;
  requestsPerSecond: number;
  p50Ms: number;
  /** CPU time of the proxy's processes per request (none for direct), µs. */
  proxyCpuUsPerRequest: number;
}

export interface WorkersRatio {
  load: string;
  /** Throughput of two workers / one, median of the per-round ratios. */
  throughputRatio: number;
  perRound: number[];
  /** Proxy CPU per request, two workers / one, median of the per-round ratios. */
  cpuRatio: number;
}

export interface WorkersResult {
  rows: WorkersRow[];
  ratios: WorkersRatio[];
  tables: Table[];
}

const MESSAGES_HEADERS = {
  'content-type': 'application/json',
  'anthropic-version': '2023-06-01',
  'x-api-key': 'unused',
};

export async function runWorkers(options: WorkersOptions): Promise<WorkersResult> {
  const servers: ChildServer[] = [];
  try {
    const mock = await spawnServer({
      script: 'src/cli.ts',
      args: ['mock-model', '--port', '0'],
      env: cleanEnv({}),
      startTimeoutMs: START_TIMEOUT_MS,
    });
    servers.push(mock);
    const serve = (count: number) =>
      spawnServer({
        script: 'src/cli.ts',
        args: ['serve', '--port', '0', '--workers', String(count)],
        env: cleanEnv({ TPX_OAUTH_TOKEN: 'bench-token', TPX_BASE_URL: mock.url }),
        discardStdout: true,
        startTimeoutMs: START_TIMEOUT_MS,
      });
    const [one, two] = await Promise.all([serve(1), serve(2)]);
    servers.push(one, two);
    const messagesTarget = (origin: string, stream: boolean): LoadTarget => ({
      origin,
      path: '/v1/messages',
      headers: MESSAGES_HEADERS,
      body: JSON.stringify(shortPrompt({ stream })),
    });
    const directTarget = (stream: boolean): LoadTarget => {
      const messages = shortPrompt({ stream });
      return {
        origin: mock.origin,
        path: `${new URL(mock.url).pathname}/chat/completions`,
        headers: {
          'content-type': 'application/json',
          accept: stream ? 'text/event-stream' : 'application/json',
          authorization: 'Bearer bench-token',
        },
        body: JSON.stringify(translateRequest(messages, { model: messages.model }).body),
      };
    };
    const variants: Variant[] = [
      { name: 'direct', target: directTarget, cpuMs: () => 0 },
      {
        name: 'workers 1',
        target: (stream) => messagesTarget(one.origin, stream),
        cpuMs: () => threadCpuMs(one.pid),
      },
      {
        name: 'workers 2',
        target: (stream) => messagesTarget(two.origin, stream),
        cpuMs: () => treeCpuMs(two.pid),
      },
    ];
    const measurements = await runVariants(variants, LOADS, options);

    const rows: WorkersRow[] = LOADS.flatMap((load) =>
      VARIANTS.map((variant) => ({
        load: load.name,
        variant,
        requestsPerSecond: round(
          medianOf(measurements, load.name, variant, (each) => each.throughput),
          4,
        ),
        p50Ms: round(medianOf(measurements, load.name, variant, (each) => each.latency.p50)),
        proxyCpuUsPerRequest:
          variant === 'direct'
            ? Number.NaN
            : round(medianOf(measurements, load.name, variant, (each) => each.cpuUsPerRequest)),
      })),
    );
    const ratios: WorkersRatio[] = LOADS.map((load) => {
      const perRound = perRoundRatios(
        measurements,
        load.name,
        'workers 2',
        'workers 1',
        (each) => each.throughput,
      );
      const cpu = perRoundRatios(
        measurements,
        load.name,
        'workers 2',
        'workers 1',
        (each) => each.cpuUsPerRequest,
      );
      return {
        load: load.name,
        throughputRatio: round(median(perRound), 3),
        perRound: perRound.map((value) => round(value, 3)),
        cpuRatio: round(median(cpu), 3),
      };
    });
    const measured: Table = {
      title: 'Workers: tpx serve --workers 1 vs --workers 2 (tpx provider, medians over rounds)',
      header: ['load', 'via', 'req/s', 'p50', 'proxy CPU/req'],
      rows: rows.map((row) => [
        row.load,
        row.variant === 'direct' ? 'direct (no proxy)' : `tpx serve --${row.variant}`,
        row.requestsPerSecond.toFixed(0),
        formatDuration(row.p50Ms),
        Number.isNaN(row.proxyCpuUsPerRequest) ? '' : formatDuration(row.proxyCpuUsPerRequest / 1000),
      ]),
      notes: [
        'proxy CPU/req: CPU time of tpx serve (with --workers 2: the primary and both workers) over the',
        'requests it answered, from /proc/<pid>/task/*/schedstat. The load generator and tpx mock-model share',
        'the same cores, so "direct" is the ceiling they leave.',
      ],
    };
    const summary: Table = {
      title: 'Workers ratio: two workers / one (median of per-round ratios)',
      header: ['load', 'throughput ratio', 'each round', 'proxy CPU/req ratio'],
      rows: ratios.map((ratio) => [
        ratio.load,
        formatRatio(ratio.throughputRatio),
        ratio.perRound.map((value) => value.toFixed(2)).join(' / '),
        formatRatio(ratio.cpuRatio),
      ]),
    };
    return { rows, ratios, tables: [summary, measured] };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}
