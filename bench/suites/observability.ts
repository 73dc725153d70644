/**
 * Benchmark 6: what observability costs. `tpx serve` in front of the same `tpx mock-model` (tpx
 * provider), with:
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
 * First a closed loop of 16 connections per variant, one variant after the other in rotating order
 * (`variants.ts`), each connection sending again as soon as its answer ends: informational (a variant
 * that is a little slower is sent fewer requests a second, each wake-up of its event loop carries fewer
 * of them, and its CPU per request rises for that reason alone), and its throughput sets the rate of
 * the runs the target is judged on.
 *
 * Those are fleet rounds (`fleet-rounds.ts`): each round starts a fresh process of every variant, and
 * a second "off" process as a control, warms them up (a few thousand requests each: a fresh process's
 * CPU per request falls by half over its first thousands of exchanges, as the compiler optimises their
 * code, and a proxy in service runs the optimised code), and sends each of them the same fixed-rate load
 * at the same time (`fixed-rate-load.ts`); a proxy gets the requests it gets, whatever its telemetry,
 * so what telemetry costs per request is a question about the same traffic, and loaded at once the
 * variants meet the same machine. The measure is each process's CPU time per request
 * (`/proc/<pid>/task/*`/schedstat, nanoseconds; every thread, and its main thread alone), and the
 * target is the CPU metrics + tracing add to an exchange: at most 0.25 ms, metrics + tracing less off,
 * the median of the per-round differences (the per-round ratio is shown too, for information). The
 * control's distance from off is the run's own resolution: two processes that do the same work,
 * measured the same way. A row in which a variant missed more than 2% of its requests is flagged as not
 * the same traffic and not judged.
 *
 * Two costs that do not grow with the requests are measured apart, after the closed loops: each
 * process's CPU time per second while idle (timers, the event-loop monitor of the default metrics, the
 * exporters' schedules), and the CPU time of one `/metrics` scrape, which a Prometheus server makes
 * every 15–60 s whatever the traffic.
 *
 * @module
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { cleanEnv, spawnServer, START_TIMEOUT_MS, type ChildServer } from '../harness/children.js';
import {
  runFleetRounds,
  type FleetLoad,
  type FleetMeasurement,
  type FleetRunOptions,
} from '../harness/fleet-rounds.js';
import type { LoadTarget } from '../harness/load.js';
import { threadCpuMs } from '../harness/process-cpu.js';
import { formatDuration, formatRatio, median, round, verdict } from '../harness/stats.js';
import type { Table } from '../harness/table.js';
import {
  medianOf,
  perRoundDifferences,
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

/** Metrics and tracing on may add at most this much CPU per exchange to both off, in ms. */
export const OBSERVABILITY_ADDED_CPU_TARGET_MS = 0.25;

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
  /** The fleet rounds the target is judged on: every variant at the same fixed rate, at the same time. */
  fixedRate: FleetRunOptions & {
    /**
     * The whole fleet's requests a second, as a share of the slowest variant's closed-loop throughput
     * (each process gets its part of it), two digits.
     */
    rateFraction: number;
  };
  /** How long each process is left idle to measure its CPU time per second at rest. */
  idleMs: number;
  /** Scrapes of `/metrics` to time, one after the other. */
  scrapes: number;
  /**
   * When set, the fleets' `tpx serve` processes run with `--cpu-prof` and write
   * `observability-<variant>-round-<n>.cpuprofile` here on exit (variant: `off`, `control`, `metrics`,
   * `tracing`, `tracing-sampled`): profiles of processes that served the same loads at the same time,
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
/** The journal on (`--journal DIR`), metrics off: its cost side by side with off. */
const JOURNAL = 'journal';
const VARIANTS = ['off', 'metrics', 'metrics + tracing', SAMPLED, JOURNAL] as const;
/** A second process with observability off, in every fleet: its ratio to off is the run's resolution. */
const CONTROL = 'off, second process';
const FLEET_VARIANTS = ['off', CONTROL, 'metrics', 'metrics + tracing', SAMPLED, JOURNAL] as const;
type FleetVariant = (typeof FLEET_VARIANTS)[number];
const COMPARED_VARIANTS = [CONTROL, 'metrics', 'metrics + tracing', SAMPLED, JOURNAL] as const;
type ComparedVariant = (typeof COMPARED_VARIANTS)[number];
/** The variant's name in a profile's file name. */
const PROFILE_NAMES: Record<FleetVariant, string> = {
  off: 'off',
  [CONTROL]: 'control',
  metrics: 'metrics',
  'metrics + tracing': 'tracing',
  [SAMPLED]: 'tracing-sampled',
  [JOURNAL]: 'journal',
};

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
  /** At a fixed rate: the main thread's part of `cpuUsPerRequest` (median over rounds). */
  mainThreadCpuUsPerRequest?: number;
  /** Requests answered over every round, warm-ups included (to put a profile's samples per request). */
  totalRequests: number;
  /** At a fixed rate: the rate asked for, the rate achieved (median over rounds), what was missed. */
  askedRate?: number;
  achievedRate?: number;
  /** Requests missed over the due ones, every round together, and in the worst round. */
  missedShare?: number;
  worstRoundMissedShare?: number;
  /** The achieved rate's largest distance from the asked one over the rounds, as a share (−0.06: 6% short). */
  worstRoundRateError?: number;
  /** Whether every round got the asked traffic (see {@link MISSED_TOLERANCE}); always true in a closed loop. */
  sameTraffic: boolean;
}

export interface ObservabilityRatio {
  /** The load's name at its fixed rate (`json at 540/s`). */
  load: string;
  /** Requests a second of the fixed rate, to each process. */
  ratePerSecond: number;
  /** An observability variant, or the control (a second process with it off). */
  variant: ComparedVariant;
  /** CPU per request at the fixed rate (every thread), this variant less off, ms: median of the rounds'. */
  addedCpuMs: number;
  /** The same, round by round, ms. */
  addedCpuMsPerRound: number[];
  /** CPU per request at the fixed rate (every thread), this variant / off, median of the per-round ratios. */
  cpuRatio: number;
  perRound: number[];
  /** The same for the main thread's CPU alone. */
  mainThreadCpuRatio: number;
  /** Achieved rate, this variant / off (should be 1). */
  throughputRatio: number;
  /** Whether this variant and off both got the asked traffic in every round. */
  sameTraffic: boolean;
  /** The same ratios in the closed loop (informational; there is no control process there). */
  closedLoop?: { load: string; cpuRatio: number; perRound: number[]; throughputRatio: number };
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
  /** The fixed rate of each load, to each process (by its base name: `json`, `stream`, `agent turn, stream`), req/s. */
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
  const upstreams: ChildServer[] = [];
  const proxies: ChildServer[] = [];
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
    upstreams.push(mock, receiver);
    const upstream = { TPX_OAUTH_TOKEN: 'bench-token', TPX_BASE_URL: mock.url };
    const tracingEnv = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
      OTEL_METRIC_EXPORT_INTERVAL: '5000',
      OTEL_SERVICE_NAME: 'tpx-bench',
    };
    const configuration: Record<FleetVariant, { args: string[]; env: Record<string, string> }> = {
      off: { args: ['--no-metrics'], env: {} },
      [CONTROL]: { args: ['--no-metrics'], env: {} },
      metrics: { args: [], env: {} },
      'metrics + tracing': { args: [], env: tracingEnv },
      // Small files: the journal rotates (and prunes) during the run, as it would in a long one.
      [JOURNAL]: {
        args: [
          '--no-metrics',
          '--journal',
          mkdtempSync(join(tmpdir(), 'tpx-bench-journal-')),
          '--journal-file-mb',
          '4',
        ],
        env: {},
      },
      [SAMPLED]: {
        args: [],
        env: {
          ...tracingEnv,
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '0.1',
        },
      },
    };
    const serve = async (variant: FleetVariant, profileName?: string): Promise<ChildServer> => {
      const server = await spawnServer({
        script: 'src/cli.ts',
        args: ['serve', '--port', '0', ...configuration[variant].args],
        env: cleanEnv({ ...upstream, ...configuration[variant].env }),
        discardStdout: true,
        startTimeoutMs: START_TIMEOUT_MS,
        nodeFlags:
          options.cpuProfileDir === undefined || profileName === undefined
            ? []
            : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`, `--cpu-prof-name=${profileName}`],
      });
      proxies.push(server);
      return server;
    };
    const stopProxy = async (server: ChildServer) => {
      await server.stop();
      proxies.splice(proxies.indexOf(server), 1);
    };
    // Keyed by the load's base name: the closed-loop and fixed-rate loads of one kind send the same bytes.
    const bodies = new Map(
      LOADS.flatMap((load) =>
        [false, true].map((stream) => [`${load.name}/${stream}`, JSON.stringify(load.request(stream))]),
      ),
    );
    const baseName = new Map<string, string>();
    const targetOf = (server: ChildServer, load: { name: string; stream: boolean }): LoadTarget => ({
      origin: server.origin,
      path: '/v1/messages',
      headers: MESSAGES_HEADERS,
      body: bodies.get(`${baseName.get(load.name)!}/${load.stream}`)!,
    });

    // First the closed loops, one variant after the other: what each answers flat out, which sets the
    // fixed rate. The same processes then measure the costs that do not grow with the requests.
    const longLived = await Promise.all(VARIANTS.map((name) => serve(name)));
    const byVariant = new Map(VARIANTS.map((name, index) => [name, longLived[index]!]));
    const variants: Variant[] = VARIANTS.map((name) => ({
      name,
      target: (_stream, load) => targetOf(byVariant.get(name)!, load),
      cpuMs: () => threadCpuMs(byVariant.get(name)!.pid),
    }));
    const closedLoads: VariantLoad[] = LOADS.map((load) => ({
      name: `${load.name} c=${CLOSED_LOOP_CONNECTIONS}`,
      connections: CLOSED_LOOP_CONNECTIONS,
      stream: load.stream,
    }));
    for (const [index, load] of closedLoads.entries()) baseName.set(load.name, LOADS[index]!.name);
    const closed = await runVariants(variants, closedLoads, options.closedLoop);

    await sleep(Math.min(500, options.idleMs));
    const idleBefore = VARIANTS.map((name) => threadCpuMs(byVariant.get(name)!.pid));
    const idleStartedAt = performance.now();
    await sleep(options.idleMs);
    const idleSeconds = (performance.now() - idleStartedAt) / 1000;
    const fixed: FixedCost[] = [];
    for (const [index, name] of VARIANTS.entries()) {
      const server = byVariant.get(name)!;
      const idleCpuMsPerSecond = (threadCpuMs(server.pid) - idleBefore[index]!) / idleSeconds;
      let scrapeCpuMs = Number.NaN;
      // Off and the journal serve no metrics: nothing to scrape.
      if (name !== 'off' && name !== JOURNAL) {
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
    await Promise.all(longLived.map(stopProxy));

    // Then the fleet rounds: every variant at the same rate per load, at the same time, fresh processes
    // each round. The whole fleet's rate is a share of the slowest variant's closed-loop throughput, so
    // that every process keeps up while the others are loaded too.
    const rates: Record<string, number> = {};
    const fixedLoads: FleetLoad[] = LOADS.map((load, index) => {
      const slowest = Math.min(
        ...VARIANTS.map((variant) =>
          medianOf(closed, closedLoads[index]!.name, variant, (each) => each.throughput),
        ),
      );
      const rate = Math.max(1, round((options.fixedRate.rateFraction * slowest) / FLEET_VARIANTS.length, 2));
      rates[load.name] = rate;
      return { name: `${load.name} at ${rate}/s`, stream: load.stream, ratePerSecond: rate };
    });
    for (const [index, load] of fixedLoads.entries()) baseName.set(load.name, LOADS[index]!.name);
    process.stderr.write(
      `[bench] observability: fleets of ${FLEET_VARIANTS.length} processes, each at ${fixedLoads
        .map((load) => load.name)
        .join(
          ', ',
        )} (together ${options.fixedRate.rateFraction * 100}% of the slowest variant's closed-loop throughput)\n`,
    );
    const fixedRate = await runFleetRounds(
      FLEET_VARIANTS,
      async (order, round) => {
        const started = await Promise.all(
          order.map((variant) =>
            serve(
              variant as FleetVariant,
              `observability-${PROFILE_NAMES[variant as FleetVariant]}-round-${round + 1}.cpuprofile`,
            ),
          ),
        );
        return new Map(order.map((variant, index) => [variant, started[index]!]));
      },
      fixedLoads,
      targetOf,
      options.fixedRate,
    );
    // The fleets stop themselves; forget them here.
    proxies.length = 0;

    const received = (await (
      await request(`${receiver.origin}/stats`)
    ).body.json()) as ObservabilityResult['received'];
    if ((received['/v1/traces']?.exports ?? 0) === 0 && options.fixedRate.durationMs >= 1_000) {
      throw new Error('observability: the OTLP receiver got no trace export; tracing was not on');
    }

    const rowOf = (
      measurements: VariantMeasurements,
      load: { name: string; ratePerSecond?: number },
      variant: string,
      mode: ObservabilityRow['mode'],
    ): ObservabilityRow => {
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
        row.mainThreadCpuUsPerRequest = round(
          median((runs as FleetMeasurement[]).map((each) => each.mainThreadCpuUsPerRequest)),
        );
        const schedules = runs.map((each) => each.schedule!);
        const due = schedules.reduce((sum, each) => sum + each.due, 0);
        const missed = schedules.reduce((sum, each) => sum + each.missed, 0);
        row.askedRate = load.ratePerSecond;
        row.achievedRate = round(median(schedules.map((each) => each.achievedRate)), 4);
        row.missedShare = round(missed / due, 3);
        row.worstRoundMissedShare = round(Math.max(...schedules.map((each) => each.missed / each.due)), 3);
        const rateErrors = schedules.map((each) => each.achievedRate / each.askedRate - 1);
        row.worstRoundRateError = round(
          rateErrors.reduce((worst, each) => (Math.abs(each) > Math.abs(worst) ? each : worst), 0),
          3,
        );
      }
      return row;
    };
    const rows = [
      ...fixedLoads.flatMap((load) =>
        FLEET_VARIANTS.map((variant) => rowOf(fixedRate, load, variant, 'fixed rate')),
      ),
      ...closedLoads.flatMap((load) =>
        VARIANTS.map((variant) => rowOf(closed, load, variant, 'closed loop')),
      ),
    ];
    const ratioOf = (measurements: VariantMeasurements, load: string, variant: string) => {
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
      COMPARED_VARIANTS.map((variant) => {
        const added = perRoundDifferences(
          fixedRate,
          load.name,
          variant,
          'off',
          (each) => each.cpuUsPerRequest / 1000,
        );
        const ratio: ObservabilityRatio = {
          load: load.name,
          ratePerSecond: load.ratePerSecond,
          variant,
          addedCpuMs: round(median(added), 4),
          addedCpuMsPerRound: added.map((value) => round(value, 4)),
          ...ratioOf(fixedRate, load.name, variant),
          mainThreadCpuRatio: round(
            median(
              perRoundRatios(
                fixedRate,
                load.name,
                variant,
                'off',
                (each) => (each as FleetMeasurement).mainThreadCpuUsPerRequest,
              ),
            ),
            3,
          ),
          sameTraffic: [variant, 'off'].every((name) => fixedRate.get(load.name)!.get(name)!.every(keptUp)),
        };
        if (variant !== CONTROL) {
          ratio.closedLoop = {
            load: closedLoads[index]!.name,
            ...ratioOf(closed, closedLoads[index]!.name, variant),
          };
        }
        return ratio;
      }),
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
      title: `Observability at a fixed rate: every variant sent the same requests at the same time (medians over ${options.fixedRate.rounds} fleet rounds)`,
      header: [
        'load',
        'observability',
        'asked req/s',
        'achieved req/s',
        'missed',
        'p50',
        'p99',
        'CPU/req',
        'of which main thread',
        'traffic',
      ],
      rows: fixedRows.map((row) => [
        row.load,
        row.variant,
        String(row.askedRate!),
        `${row.achievedRate!.toFixed(1)} (${formatSignedPercent(row.achievedRate! / row.askedRate! - 1)}; worst round ${formatSignedPercent(row.worstRoundRateError!)})`,
        `${percent(row.missedShare!)} (worst round ${percent(row.worstRoundMissedShare!)})`,
        formatDuration(row.p50Ms),
        formatDuration(row.p99Ms),
        formatDuration(row.cpuUsPerRequest / 1000),
        formatDuration(row.mainThreadCpuUsPerRequest! / 1000),
        row.sameTraffic ? 'same' : trafficWarning,
      ]),
      notes: [
        `Each round: a fresh process of each variant, started in rotating order, warmed up for ${options.fixedRate.warmupMs} ms and until it`,
        `had answered ${options.fixedRate.warmupRequests ?? 0} requests of the load (a closed loop of 4 connections each), then every`,
        `process sent the load at the same time for ${options.fixedRate.durationMs} ms, or as long as ${options.fixedRate.minMeasuredRequests ?? 0} requests take at the load's rate if that`,
        `is longer: requests started on a schedule, at most ${options.fixedRate.maxInFlight} in flight per`,
        'process (a request due beyond that is missed, not queued).',
        `The rate: ${options.fixedRate.rateFraction * 100}% of the slowest variant's closed-loop throughput (below) for the whole fleet, two digits.`,
        'achieved: requests sent and answered, per second, counted by when each was sent.',
        'CPU/req: CPU time of that tpx serve process (every thread, /proc/<pid>/task/*/schedstat) over the',
        'requests it answered, its timers between requests included; main thread: the thread that runs',
        'JavaScript (the others: the garbage collector and the compiler helpers, libuv). tracing: OTLP/HTTP',
        `protobuf to a receiver on loopback, which got ${receivedNote}`,
      ],
    };
    const isJudged = (ratio: ObservabilityRatio) => ratio.variant === 'metrics + tracing';
    const summary: Table = {
      title:
        'Observability cost at a fixed rate: CPU each exchange gains, on − off (median of the per-round differences; ratio and closed loop for comparison)',
      header: [
        'load',
        'on',
        'added CPU/req',
        'each round',
        'CPU/req ratio',
        'main thread ratio',
        'closed loop c=16 (info)',
        'traffic',
        'target',
        'verdict',
      ],
      rows: ratios.map((ratio) => [
        ratio.load,
        ratio.variant,
        `${ratio.addedCpuMs.toFixed(3)} ms`,
        ratio.addedCpuMsPerRound.map((value) => value.toFixed(3)).join(' / '),
        formatRatio(ratio.cpuRatio),
        formatRatio(ratio.mainThreadCpuRatio),
        ratio.closedLoop === undefined
          ? ''
          : `${formatRatio(ratio.closedLoop.cpuRatio)} at ${formatRatio(ratio.closedLoop.throughputRatio)} the req/s`,
        ratio.sameTraffic ? 'same' : trafficWarning,
        isJudged(ratio)
          ? `≤ ${OBSERVABILITY_ADDED_CPU_TARGET_MS} ms`
          : ratio.variant === CONTROL
            ? '(resolution)'
            : '(info)',
        isJudged(ratio)
          ? ratio.sameTraffic
            ? verdict(ratio.addedCpuMs, { max: OBSERVABILITY_ADDED_CPU_TARGET_MS })
            : 'not judged: not the same traffic'
          : '',
      ]),
      notes: [
        'added CPU/req: CPU time per request of the variant less that of off, in the same round (every thread), ms.',
        `${CONTROL}: a second process with observability off in every fleet. Its distance from off is what this`,
        'run cannot tell apart from nothing: a cost smaller than it is within the noise.',
      ],
    };
    const closedTable: Table = {
      title: `Observability in a closed loop (informational): ${CLOSED_LOOP_CONNECTIONS} connections flat out, one variant after the other (medians over ${options.closedLoop.rounds} rounds)`,
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
        `Idle: ${options.idleMs} ms with no request, after the closed loops. Scrape: the mean of ${options.scrapes} scrapes,`,
        'one after the other; at one scrape every 15 s it is that much CPU per 15 s, whatever the traffic.',
      ],
    };
    return { rates, rows, ratios, fixed, received, tables: [summary, measured, closedTable, fixedTable] };
  } finally {
    // The proxies first: a traced one exports its last spans as it stops (and only then writes its
    // profile), which needs the receiver still listening.
    await Promise.all(proxies.map((server) => server.stop()));
    await Promise.all(upstreams.map((server) => server.stop()));
  }
}
