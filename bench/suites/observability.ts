/**
 * Benchmark 6: what observability costs. Four `tpx serve` processes in front of the same
 * `tpx mock-model` (tpx provider), side by side in rotating order, for a few rounds:
 *
 * - off: `--no-metrics`, no `OTEL_*` variable (the OpenTelemetry SDK is not even loaded);
 * - metrics: the Prometheus metrics, on by default;
 * - metrics + tracing: the same, and `OTEL_EXPORTER_OTLP_ENDPOINT` aimed at an OTLP/HTTP receiver on
 *   loopback (`bench/servers/otlp-receiver.ts`): a span per exchange and a child span per upstream
 *   attempt, the GenAI histograms, exported as the defaults do (protobuf, spans in batches), metrics
 *   every 5 s instead of every 60 s so that their export falls inside the measured runs;
 * - metrics + tracing 1/10: the same with `OTEL_TRACES_SAMPLER=parentbased_traceidratio` at 0.1, the
 *   setting a busy proxy would use: one exchange without a `traceparent` in ten is traced.
 *
 * Each under three loads: a one-line prompt as JSON and as a stream, and an agent's first turn (a
 * 12 KiB request with 16 tool definitions, streamed), whose own work is larger, as in real use.
 *
 * The measure is each process's CPU time per request (`/proc/<pid>/task/*`/schedstat, nanoseconds), and
 * the target is metrics + tracing ≤ 1.05× off, the median of the per-round ratios. Two costs that do
 * not grow with the requests are measured apart, after the loads: each process's CPU time per second
 * while idle (timers, the event-loop monitor of the default metrics, the exporters' schedules), and the
 * CPU time of one `/metrics` scrape, which a Prometheus server makes every 15–60 s whatever the traffic.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { cleanEnv, spawnServer, START_TIMEOUT_MS, type ChildServer } from '../harness/children.js';
import type { LoadTarget } from '../harness/load.js';
import { threadCpuMs } from '../harness/process-cpu.js';
import { formatDuration, formatRatio, median, round, verdict } from '../harness/stats.js';
import type { Table } from '../harness/table.js';
import {
  medianOf,
  perRoundRatios,
  runVariants,
  type Variant,
  type VariantLoad,
} from '../harness/variants.js';
import type { MessagesRequest } from '../../src/protocol/messages.js';
import { conversation, shortPrompt } from '../inputs/conversations.js';

/** Metrics and tracing on may cost at most this much CPU per request, relative to both off. */
export const OBSERVABILITY_CPU_TARGET = 1.05;

export interface ObservabilityOptions {
  rounds: number;
  warmupMs: number;
  durationMs: number;
  /** How long each process is left idle to measure its CPU time per second at rest. */
  idleMs: number;
  /** Scrapes of `/metrics` to time, one after the other. */
  scrapes: number;
  /**
   * When set, the four `tpx serve` processes run with `--cpu-prof` and write `observability-off`,
   * `-metrics`, `-tracing` and `-tracing-sampled.cpuprofile` here on exit: profiles made under the same interleaved loads,
   * to hold against each other (`bench/profile/telemetry-share.ts`).
   */
  cpuProfileDir?: string | undefined;
}

/** Each load and the request it sends: a one-line prompt, or an agent's first turn (12 KiB, 16 tools). */
const LOADS: readonly (VariantLoad & { request: (stream: boolean) => MessagesRequest })[] = [
  { name: 'json c=16', connections: 16, stream: false, request: (stream) => shortPrompt({ stream }) },
  { name: 'stream c=16', connections: 16, stream: true, request: (stream) => shortPrompt({ stream }) },
  {
    name: 'agent turn, stream c=16',
    connections: 16,
    stream: true,
    request: (stream) => conversation('small', { stream }),
  },
];
/** The sampled variant traces one root exchange in ten (`parentbased_traceidratio`, 0.1). */
const SAMPLED = 'metrics + tracing 1/10';
const VARIANTS = ['off', 'metrics', 'metrics + tracing', SAMPLED] as const;
type OnVariant = Exclude<(typeof VARIANTS)[number], 'off'>;

export interface ObservabilityRow {
  load: string;
  variant: string;
  requestsPerSecond: number;
  p50Ms: number;
  cpuUsPerRequest: number;
  /** Requests answered over every round, warm-ups included (to put a profile's samples per request). */
  totalRequests: number;
}

export interface ObservabilityRatio {
  load: string;
  variant: OnVariant;
  /** CPU per request, this variant / off, median of the per-round ratios. */
  cpuRatio: number;
  perRound: number[];
  /** Throughput, this variant / off (informational). */
  throughputRatio: number;
}

/** What a process costs whatever the traffic. */
export interface FixedCost {
  variant: string;
  /** CPU time per second while no request comes, ms. */
  idleCpuMsPerSecond: number;
  /** CPU time of one `/metrics` scrape, ms (`NaN` without metrics). */
  scrapeCpuMs: number;
}

export interface ObservabilityResult {
  rows: ObservabilityRow[];
  fixed: FixedCost[];
  ratios: ObservabilityRatio[];
  /** What the receiver got: exports and bytes by path. */
  received: Record<string, { exports: number; bytes: number }>;
  tables: Table[];
}

const MESSAGES_HEADERS = {
  'content-type': 'application/json',
  'anthropic-version': '2023-06-01',
  'x-api-key': 'unused',
};

export async function runObservability(options: ObservabilityOptions): Promise<ObservabilityResult> {
  const servers: ChildServer[] = [];
  try {
    const [mock, receiver] = await Promise.all([
      spawnServer({
        script: 'src/cli.ts',
        args: ['mock-model', '--port', '0'],
        env: cleanEnv({}),
        startTimeoutMs: START_TIMEOUT_MS,
      }),
      spawnServer({
        script: 'bench/servers/otlp-receiver.ts',
        env: cleanEnv({}),
        startTimeoutMs: START_TIMEOUT_MS,
      }),
    ]);
    servers.push(mock, receiver);
    const upstream = { TPX_OAUTH_TOKEN: 'bench-token', TPX_BASE_URL: mock.url };
    const serve = (name: string, args: string[], env: Record<string, string>) =>
      spawnServer({
        script: 'src/cli.ts',
        args: ['serve', '--port', '0', ...args],
        env: cleanEnv({ ...upstream, ...env }),
        discardStdout: true,
        startTimeoutMs: START_TIMEOUT_MS,
        nodeFlags:
          options.cpuProfileDir === undefined
            ? []
            : [
                '--cpu-prof',
                `--cpu-prof-dir=${options.cpuProfileDir}`,
                `--cpu-prof-name=observability-${name}.cpuprofile`,
              ],
      });
    const tracingEnv = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
      OTEL_METRIC_EXPORT_INTERVAL: '5000',
      OTEL_SERVICE_NAME: 'tpx-bench',
    };
    const [off, metrics, traced, sampled] = await Promise.all([
      serve('off', ['--no-metrics'], {}),
      serve('metrics', [], {}),
      serve('tracing', [], tracingEnv),
      serve('tracing-sampled', [], {
        ...tracingEnv,
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
      }),
    ]);
    servers.push(off, metrics, traced, sampled);
    const byVariant: Record<(typeof VARIANTS)[number], ChildServer> = {
      off,
      metrics,
      'metrics + tracing': traced,
      [SAMPLED]: sampled,
    };
    const bodies = new Map(
      LOADS.flatMap((load) =>
        [false, true].map((stream) => [`${load.name}/${stream}`, JSON.stringify(load.request(stream))]),
      ),
    );
    const target =
      (server: ChildServer) =>
      (stream: boolean, load: VariantLoad): LoadTarget => ({
        origin: server.origin,
        path: '/v1/messages',
        headers: MESSAGES_HEADERS,
        body: bodies.get(`${load.name}/${stream}`)!,
      });
    const variants: Variant[] = VARIANTS.map((name) => ({
      name,
      target: target(byVariant[name]),
      cpuMs: () => threadCpuMs(byVariant[name].pid),
    }));

    const measurements = await runVariants(variants, LOADS, options);

    // After the loads: CPU at rest, all four idle at once, then what one scrape costs.
    await sleep(Math.min(500, options.idleMs));
    const idleBefore = VARIANTS.map((name) => threadCpuMs(byVariant[name].pid));
    const idleStartedAt = performance.now();
    await sleep(options.idleMs);
    const idleSeconds = (performance.now() - idleStartedAt) / 1000;
    const fixed: FixedCost[] = [];
    for (const [index, name] of VARIANTS.entries()) {
      const server = byVariant[name];
      const idleCpuMsPerSecond = (threadCpuMs(server.pid) - idleBefore[index]!) / idleSeconds;
      let scrapeCpuMs = Number.NaN;
      if (name !== 'off') {
        const before = threadCpuMs(server.pid);
        for (let scrape = 0; scrape < options.scrapes; scrape++) {
          const response = await request(`${server.origin}/metrics`);
          const text = await response.body.text();
          if (response.statusCode !== 200 || !text.includes('tpx_requests_total')) {
            throw new Error(`observability: /metrics of ${name} answered ${response.statusCode}`);
          }
        }
        scrapeCpuMs = (threadCpuMs(server.pid) - before) / options.scrapes;
      }
      fixed.push({
        variant: name,
        idleCpuMsPerSecond: round(idleCpuMsPerSecond, 3),
        scrapeCpuMs: round(scrapeCpuMs, 3),
      });
    }
    const received = (await (
      await request(`${receiver.origin}/stats`)
    ).body.json()) as ObservabilityResult['received'];
    if ((received['/v1/traces']?.exports ?? 0) === 0 && options.durationMs >= 1_000) {
      throw new Error('observability: the OTLP receiver got no trace export; tracing was not on');
    }

    const rows: ObservabilityRow[] = LOADS.flatMap((load) =>
      VARIANTS.map((variant) => ({
        load: load.name,
        variant,
        requestsPerSecond: round(
          medianOf(measurements, load.name, variant, (each) => each.throughput),
          4,
        ),
        p50Ms: round(medianOf(measurements, load.name, variant, (each) => each.latency.p50)),
        cpuUsPerRequest: round(medianOf(measurements, load.name, variant, (each) => each.cpuUsPerRequest)),
        totalRequests: measurements
          .get(load.name)!
          .get(variant)!
          .reduce((sum, each) => sum + each.completedTotal, 0),
      })),
    );
    const ratios: ObservabilityRatio[] = LOADS.flatMap((load) =>
      (['metrics', 'metrics + tracing', SAMPLED] as const).map((variant) => {
        const perRound = perRoundRatios(
          measurements,
          load.name,
          variant,
          'off',
          (each) => each.cpuUsPerRequest,
        );
        const throughput = perRoundRatios(measurements, load.name, variant, 'off', (each) => each.throughput);
        return {
          load: load.name,
          variant,
          cpuRatio: round(median(perRound), 3),
          perRound: perRound.map((value) => round(value, 3)),
          throughputRatio: round(median(throughput), 3),
        };
      }),
    );
    const measured: Table = {
      title:
        'Observability: tpx serve with metrics and tracing off and on (tpx provider, medians over rounds)',
      header: ['load', 'observability', 'req/s', 'p50', 'CPU/req'],
      rows: rows.map((row) => [
        row.load,
        row.variant,
        row.requestsPerSecond.toFixed(0),
        formatDuration(row.p50Ms),
        formatDuration(row.cpuUsPerRequest / 1000),
      ]),
      notes: [
        'CPU/req: CPU time of that tpx serve process (every thread, /proc/<pid>/task/*/schedstat) over the',
        'requests it answered. tracing: OTLP/HTTP protobuf to a receiver on loopback, which got',
        Object.entries(received)
          .map(([path, entry]) => `${entry.exports} exports to ${path} (${entry.bytes} bytes)`)
          .join(', ') + '.',
      ],
    };
    const summary: Table = {
      title: 'Observability cost: CPU per request, on / off (median of per-round ratios)',
      header: ['load', 'on', 'CPU/req ratio', 'each round', 'throughput ratio', 'target', 'verdict'],
      rows: ratios.map((ratio) => [
        ratio.load,
        ratio.variant,
        formatRatio(ratio.cpuRatio),
        ratio.perRound.map((value) => value.toFixed(3)).join(' / '),
        formatRatio(ratio.throughputRatio),
        ratio.variant === 'metrics + tracing' ? `≤ ${OBSERVABILITY_CPU_TARGET}×` : '(info)',
        ratio.variant === 'metrics + tracing'
          ? verdict(ratio.cpuRatio, { max: OBSERVABILITY_CPU_TARGET })
          : '',
      ]),
    };
    const fixedTable: Table = {
      title: 'Observability: costs that do not grow with the requests',
      header: ['observability', 'CPU per second, idle', 'CPU per /metrics scrape'],
      rows: fixed.map((cost) => [
        cost.variant,
        formatDuration(cost.idleCpuMsPerSecond),
        Number.isNaN(cost.scrapeCpuMs) ? '' : formatDuration(cost.scrapeCpuMs),
      ]),
      notes: [
        `Idle: ${options.idleMs} ms with no request, after the loads. Scrape: the mean of ${options.scrapes} scrapes,`,
        'one after the other; at one scrape every 15 s it is that much CPU per 15 s, whatever the traffic.',
      ],
    };
    return { rows, ratios, fixed, received, tables: [summary, measured, fixedTable] };
  } finally {
    // The proxies first: the traced one exports its last spans as it stops (and only then writes its
    // profile), which needs the receiver still listening.
    const [upstreams, proxies] = [servers.slice(0, 2), servers.slice(2)];
    await Promise.all(proxies.map((server) => server.stop()));
    await Promise.all(upstreams.map((server) => server.stop()));
  }
}
