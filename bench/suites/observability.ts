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
 * Each load runs twice. First as a closed loop of 16 connections, each sending again as soon as its
 * answer ends: a variant that is a little slower is then sent fewer requests a second, each wake-up of
 * its event loop carries fewer of them, and its CPU per request rises for that reason alone. So these
 * rows are informational, and they set the rate of the second run: requests started on a schedule at
 * the same rate for every variant (`fixed-rate-load.ts`), half the slowest variant's closed-loop
 * throughput, so that each keeps up. A proxy gets the requests it gets, whatever its telemetry: what
 * telemetry costs per request is a question about the same traffic.
 *
 * The measure is each process's CPU time per request (`/proc/<pid>/task/*`/schedstat, nanoseconds), and
 * the target is metrics + tracing ≤ 1.05× off at the fixed rate, the median of the per-round ratios; a
 * row in which a variant missed more than 2% of its requests is flagged as not the same traffic and not
 * judged. Two costs that do
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
  type VariantMeasurement,
  type VariantMeasurements,
  type VariantRunOptions,
} from '../harness/variants.js';
import type { MessagesRequest } from '../../src/protocol/messages.js';
import { conversation, shortPrompt } from '../inputs/conversations.js';

/** Metrics and tracing on may cost at most this much CPU per request, relative to both off. */
export const OBSERVABILITY_CPU_TARGET = 1.05;

/**
 * At a fixed rate, a run in which a variant missed more than this share of its requests, or got a rate
 * further than {@link RATE_TOLERANCE} from the one asked, did not get the same traffic as the others.
 */
export const MISSED_TOLERANCE = 0.02;
export const RATE_TOLERANCE = 0.05;

export interface ObservabilityOptions {
  /**
   * The closed loops (each of 16 connections sends again when its answer ends): informational, and
   * their throughput sets the fixed rate.
   */
  closedLoop: VariantRunOptions;
  /** The loads the target is judged on: requests started at the same fixed rate for every variant. */
  fixedRate: VariantRunOptions & {
    /** The rate of a load: this share of the slowest variant's closed-loop throughput, two digits. */
    rateFraction: number;
    /** Requests in flight at most; one due beyond that is missed (and reported). */
    maxInFlight: number;
  };
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
const LOADS: readonly { name: string; stream: boolean; request: (stream: boolean) => MessagesRequest }[] = [
  { name: 'json', stream: false, request: (stream) => shortPrompt({ stream }) },
  { name: 'stream', stream: true, request: (stream) => shortPrompt({ stream }) },
  { name: 'agent turn, stream', stream: true, request: (stream) => conversation('small', { stream }) },
];
/** Connections of each closed loop. */
const CLOSED_LOOP_CONNECTIONS = 16;
/** The sampled variant traces one root exchange in ten (`parentbased_traceidratio`, 0.1). */
const SAMPLED = 'metrics + tracing 1/10';
const VARIANTS = ['off', 'metrics', 'metrics + tracing', SAMPLED] as const;
const ON_VARIANTS = ['metrics', 'metrics + tracing', SAMPLED] as const;
type OnVariant = (typeof ON_VARIANTS)[number];

export interface ObservabilityRow {
  /** `fixed rate` (what the target is judged on) or `closed loop` (informational). */
  mode: 'fixed rate' | 'closed loop';
  load: string;
  variant: string;
  /** Requests answered per second after the warm-up, median over rounds. */
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  /** Requests answered over every round, warm-ups included (to put a profile's samples per request). */
  totalRequests: number;
  /** At a fixed rate: the rate asked for, the rate achieved (median over rounds), what was missed. */
  askedRate?: number;
  achievedRate?: number;
  /** Requests missed over the due ones, every round together, and in the worst round. */
  missedShare?: number;
  worstRoundMissedShare?: number;
  /** Whether every round got the asked traffic (see {@link MISSED_TOLERANCE}); always true in a closed loop. */
  sameTraffic: boolean;
}

export interface ObservabilityRatio {
  /** The load's name at its fixed rate (`json at 540/s`). */
  load: string;
  /** Requests a second of the fixed rate. */
  ratePerSecond: number;
  variant: OnVariant;
  /** CPU per request at the fixed rate, this variant / off, median of the per-round ratios. */
  cpuRatio: number;
  perRound: number[];
  /** Achieved rate, this variant / off (should be 1). */
  throughputRatio: number;
  /** Whether this variant and off both got the asked traffic in every round. */
  sameTraffic: boolean;
  /** The same ratios in the closed loop (informational: a slower variant is sent fewer requests). */
  closedLoop: { load: string; cpuRatio: number; perRound: number[]; throughputRatio: number };
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
  /** The fixed rate of each load (by its base name: `json`, `stream`, `agent turn, stream`), req/s. */
  rates: Record<string, number>;
  rows: ObservabilityRow[];
  fixed: FixedCost[];
  ratios: ObservabilityRatio[];
  /** What the receiver got: exports and bytes by path. */
  received: Record<string, { exports: number; bytes: number }>;
  tables: Table[];
}

/** Whether a fixed-rate run got the traffic asked for: few requests missed, the rate achieved. */
function keptUp(measurement: VariantMeasurement): boolean {
  const schedule = measurement.schedule;
  if (schedule === undefined) return true;
  return (
    schedule.missed <= MISSED_TOLERANCE * schedule.due &&
    Math.abs(schedule.achievedRate / schedule.askedRate - 1) <= RATE_TOLERANCE
  );
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
    // Keyed by the load's base name: the closed-loop and fixed-rate loads of one kind send the same bytes.
    const bodies = new Map(
      LOADS.flatMap((load) =>
        [false, true].map((stream) => [`${load.name}/${stream}`, JSON.stringify(load.request(stream))]),
      ),
    );
    const baseName = new Map<string, string>();
    const target =
      (server: ChildServer) =>
      (stream: boolean, load: VariantLoad): LoadTarget => ({
        origin: server.origin,
        path: '/v1/messages',
        headers: MESSAGES_HEADERS,
        body: bodies.get(`${baseName.get(load.name)!}/${stream}`)!,
      });
    const variants: Variant[] = VARIANTS.map((name) => ({
      name,
      target: target(byVariant[name]),
      cpuMs: () => threadCpuMs(byVariant[name].pid),
    }));

    // First the closed loops: what each variant answers flat out, which sets the fixed rate.
    const closedLoads: VariantLoad[] = LOADS.map((load) => ({
      name: `${load.name} c=${CLOSED_LOOP_CONNECTIONS}`,
      connections: CLOSED_LOOP_CONNECTIONS,
      stream: load.stream,
    }));
    for (const [index, load] of closedLoads.entries()) baseName.set(load.name, LOADS[index]!.name);
    const closed = await runVariants(variants, closedLoads, options.closedLoop);

    // Then every variant at the same rate per load: a share of the slowest variant's throughput, so
    // that each keeps up.
    const rates: Record<string, number> = {};
    const fixedLoads: VariantLoad[] = LOADS.map((load, index) => {
      const slowest = Math.min(
        ...VARIANTS.map((variant) =>
          medianOf(closed, closedLoads[index]!.name, variant, (each) => each.throughput),
        ),
      );
      const rate = Math.max(1, round(options.fixedRate.rateFraction * slowest, 2));
      rates[load.name] = rate;
      return {
        name: `${load.name} at ${rate}/s`,
        connections: options.fixedRate.maxInFlight,
        stream: load.stream,
        ratePerSecond: rate,
      };
    });
    for (const [index, load] of fixedLoads.entries()) baseName.set(load.name, LOADS[index]!.name);
    process.stderr.write(
      `[bench] observability: fixed rates ${fixedLoads.map((load) => load.name).join(', ')} (${
        options.fixedRate.rateFraction * 100
      }% of the slowest variant's closed-loop throughput)\n`,
    );
    const fixedRate = await runVariants(variants, fixedLoads, options.fixedRate);

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
    if ((received['/v1/traces']?.exports ?? 0) === 0 && options.fixedRate.durationMs >= 1_000) {
      throw new Error('observability: the OTLP receiver got no trace export; tracing was not on');
    }

    const rowsOf = (
      measurements: VariantMeasurements,
      loads: readonly VariantLoad[],
      mode: ObservabilityRow['mode'],
    ): ObservabilityRow[] =>
      loads.flatMap((load) =>
        VARIANTS.map((variant) => {
          const runs = measurements.get(load.name)!.get(variant)!;
          const of = (metric: (each: VariantMeasurement) => number) =>
            medianOf(measurements, load.name, variant, metric);
          const row: ObservabilityRow = {
            mode,
            load: load.name,
            variant,
            requestsPerSecond: round(
              of((each) => each.throughput),
              4,
            ),
            p50Ms: round(of((each) => each.latency.p50)),
            p99Ms: round(of((each) => each.latency.p99)),
            cpuUsPerRequest: round(of((each) => each.cpuUsPerRequest)),
            totalRequests: runs.reduce((sum, each) => sum + each.completedTotal, 0),
            sameTraffic: runs.every(keptUp),
          };
          if (load.ratePerSecond !== undefined) {
            const schedules = runs.map((each) => each.schedule!);
            const due = schedules.reduce((sum, each) => sum + each.due, 0);
            const missed = schedules.reduce((sum, each) => sum + each.missed, 0);
            row.askedRate = load.ratePerSecond;
            row.achievedRate = round(median(schedules.map((each) => each.achievedRate)), 4);
            row.missedShare = round(missed / due, 3);
            row.worstRoundMissedShare = round(
              Math.max(...schedules.map((each) => each.missed / each.due)),
              3,
            );
          }
          return row;
        }),
      );
    const rows = [
      ...rowsOf(fixedRate, fixedLoads, 'fixed rate'),
      ...rowsOf(closed, closedLoads, 'closed loop'),
    ];
    const ratioOf = (measurements: VariantMeasurements, load: string, variant: OnVariant) => {
      const perRound = perRoundRatios(measurements, load, variant, 'off', (each) => each.cpuUsPerRequest);
      const throughput = perRoundRatios(measurements, load, variant, 'off', (each) =>
        each.schedule === undefined ? each.throughput : each.schedule.achievedRate,
      );
      return {
        cpuRatio: round(median(perRound), 3),
        perRound: perRound.map((value) => round(value, 3)),
        throughputRatio: round(median(throughput), 3),
      };
    };
    const ratios: ObservabilityRatio[] = fixedLoads.flatMap((load, index) =>
      ON_VARIANTS.map((variant) => ({
        load: load.name,
        ratePerSecond: load.ratePerSecond!,
        variant,
        ...ratioOf(fixedRate, load.name, variant),
        sameTraffic: [variant, 'off'].every((name) => fixedRate.get(load.name)!.get(name)!.every(keptUp)),
        closedLoop: { load: closedLoads[index]!.name, ...ratioOf(closed, closedLoads[index]!.name, variant) },
      })),
    );
    const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
    const formatSignedPercent = (share: number) => `${share >= 0 ? '+' : '−'}${percent(Math.abs(share))}`;
    const trafficWarning = `⚠ NOT THE SAME TRAFFIC (a round missed > ${percent(MISSED_TOLERANCE)} or was ${
      RATE_TOLERANCE * 100
    }% off the rate)`;
    const receivedNote =
      Object.entries(received)
        .map(([path, entry]) => `${entry.exports} exports to ${path} (${entry.bytes} bytes)`)
        .join(', ') + '.';
    const fixedRows = rows.filter((row) => row.mode === 'fixed rate');
    const measured: Table = {
      title: `Observability at a fixed rate: the same requests a second for every variant (medians over ${options.fixedRate.rounds} rounds)`,
      header: [
        'load',
        'observability',
        'asked req/s',
        'achieved req/s',
        'missed',
        'p50',
        'p99',
        'CPU/req',
        'traffic',
      ],
      rows: fixedRows.map((row) => [
        row.load,
        row.variant,
        String(row.askedRate!),
        `${row.achievedRate!.toFixed(1)} (${formatSignedPercent(row.achievedRate! / row.askedRate! - 1)})`,
        `${percent(row.missedShare!)} (worst round ${percent(row.worstRoundMissedShare!)})`,
        formatDuration(row.p50Ms),
        formatDuration(row.p99Ms),
        formatDuration(row.cpuUsPerRequest / 1000),
        row.sameTraffic ? 'same' : trafficWarning,
      ]),
      notes: [
        `Each load at ${options.fixedRate.rateFraction * 100}% of the slowest variant's closed-loop throughput (below), rounded to two`,
        `digits; requests started on a schedule, at most ${options.fixedRate.maxInFlight} in flight (a request due beyond that is missed, not queued).`,
        'achieved: requests sent after the warm-up and answered, per second, counted by when each was sent.',
        'CPU/req: CPU time of that tpx serve process (every thread, /proc/<pid>/task/*/schedstat) over the',
        'requests it answered, its timers between requests included. tracing: OTLP/HTTP protobuf to a',
        `receiver on loopback, which got ${receivedNote}`,
      ],
    };
    const summary: Table = {
      title:
        'Observability cost at a fixed rate: CPU per request, on / off (median of per-round ratios; closed loop for comparison)',
      header: [
        'load',
        'on',
        'CPU/req ratio',
        'each round',
        'closed loop c=16 (info)',
        'traffic',
        'target',
        'verdict',
      ],
      rows: ratios.map((ratio) => [
        ratio.load,
        ratio.variant,
        formatRatio(ratio.cpuRatio),
        ratio.perRound.map((value) => value.toFixed(3)).join(' / '),
        `${formatRatio(ratio.closedLoop.cpuRatio)} at ${formatRatio(ratio.closedLoop.throughputRatio)} the req/s`,
        ratio.sameTraffic ? 'same' : trafficWarning,
        ratio.variant === 'metrics + tracing' ? `≤ ${OBSERVABILITY_CPU_TARGET}×` : '(info)',
        ratio.variant === 'metrics + tracing'
          ? ratio.sameTraffic
            ? verdict(ratio.cpuRatio, { max: OBSERVABILITY_CPU_TARGET })
            : 'not judged: not the same traffic'
          : '',
      ]),
    };
    const closedTable: Table = {
      title: `Observability in a closed loop (informational): ${CLOSED_LOOP_CONNECTIONS} connections flat out (medians over ${options.closedLoop.rounds} rounds)`,
      header: ['load', 'observability', 'req/s', 'p50', 'CPU/req', 'CPU/req ratio', 'each round'],
      rows: closedLoads.flatMap((load) =>
        VARIANTS.map((variant) => {
          const row = rows.find(
            (each) => each.mode === 'closed loop' && each.load === load.name && each.variant === variant,
          )!;
          const ratio = variant === 'off' ? undefined : ratioOf(closed, load.name, variant);
          return [
            row.load,
            row.variant,
            row.requestsPerSecond.toFixed(0),
            formatDuration(row.p50Ms),
            formatDuration(row.cpuUsPerRequest / 1000),
            ratio === undefined ? '' : formatRatio(ratio.cpuRatio),
            ratio === undefined ? '' : ratio.perRound.map((value) => value.toFixed(3)).join(' / '),
          ];
        }),
      ),
      notes: [
        'Each connection sends again as soon as its answer ends, so a slower variant is sent fewer requests a',
        'second, and each wake-up of its event loop carries fewer of them: its CPU per request rises for that',
        'reason too. Not the measure of the target; its throughput sets the fixed rate above.',
      ],
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
    return { rates, rows, ratios, fixed, received, tables: [summary, measured, closedTable, fixedTable] };
  } finally {
    // The proxies first: the traced one exports its last spans as it stops (and only then writes its
    // profile), which needs the receiver still listening.
    const [upstreams, proxies] = [servers.slice(0, 2), servers.slice(2)];
    await Promise.all(proxies.map((server) => server.stop()));
    await Promise.all(upstreams.map((server) => server.stop()));
  }
}
