/**
 * Benchmark 3: the proxy, `tpx serve`, against a bare pass-through proxy, both in front of the same
 * instant upstream, for both providers:
 *
 * | provider  | upstream                                                 | `tpx serve` started with                 |
 * |-----------|----------------------------------------------------------|------------------------------------------|
 * | tpx       | `tpx mock-model` (OpenAI-compatible, scripted, instant)  | `TPX_OAUTH_TOKEN` + `TPX_BASE_URL`       |
 * | anthropic | `bench/servers/anthropic-mock.ts` (Messages, instant)    | `ANTHROPIC_API_KEY` + `ANTHROPIC_BASE_URL` |
 *
 * Every server is its own child process, run with plain `node` from a throw-away build of the sources
 * (`harness/build.ts`), started as `tpx serve` and `tpx mock-model` run for users (the CLI itself, with
 * its default logging on, log lines going to /dev/null); the load generator is this process. Three ways
 * to the same upstream are measured back to back, in rotating order, in each round:
 *
 * - direct: the client talks to the upstream itself (on the tpx path it sends the Chat Completions body
 *   that `tpx serve` would send, so the upstream does the same work in all three cases);
 * - pass-through: through `bench/servers/pass-through.ts`, which pipes bytes and parses nothing;
 * - tpx serve: through the real proxy, with a Messages request.
 *
 * Loads: non-streaming at 1 and 16 connections, streaming at 16. Added latency = a proxy's latency
 * minus the direct latency in the same round. Targets: tpx serve's added p50 at one connection ≤ 1.25×
 * the pass-through's; its throughput at 16 connections ≥ 0.85× the pass-through's; its streaming time
 * to first byte at 16 connections ≤ 1.3× the pass-through's. Each relay's CPU time per request is read
 * from `/proc` around each load, which explains the throughput.
 *
 * @module
 */
import { request } from 'undici';
import { translateRequest } from '../../src/translate/translate-request.js';
import { cleanEnv, spawnServer, type ChildServer } from '../harness/children.js';
import { runLoad, type LoadResult, type LoadTarget } from '../harness/load.js';
import { formatDuration, formatRatio, median, round, verdict } from '../harness/stats.js';
import type { Table } from '../harness/table.js';
import { shortPrompt } from '../inputs/conversations.js';

export type ProviderName = 'tpx' | 'anthropic';
export type Via = 'direct' | 'pass-through' | 'tpx serve';
export type Load = 'json c=1' | 'json c=16' | 'stream c=16';

export const PROVIDERS: readonly ProviderName[] = ['tpx', 'anthropic'];
const VIAS: readonly Via[] = ['direct', 'pass-through', 'tpx serve'];
const LOADS: readonly { name: Load; connections: number; stream: boolean }[] = [
  { name: 'json c=1', connections: 1, stream: false },
  { name: 'json c=16', connections: 16, stream: false },
  { name: 'stream c=16', connections: 16, stream: true },
];

export const PROXY_TARGETS = {
  /** tpx serve's added p50 latency over the pass-through's, one connection. */
  addedLatencyRatio: 1.25,
  /** tpx serve's throughput over the pass-through's, 16 connections, at least. */
  throughputRatio: 0.85,
  /** tpx serve's time to first byte over the pass-through's, streaming, 16 connections. */
  firstByteRatio: 1.3,
} as const;

export interface ProxyOptions {
  rounds: number;
  warmupMs: number;
  durationMs: number;
  /**
   * When set, `tpx serve` and the pass-through run with `--cpu-prof` and write their profiles here on
   * exit, as `<provider>-serve.cpuprofile` and `<provider>-pass-through.cpuprofile`.
   */
  cpuProfileDir?: string | undefined;
}

/** Medians over rounds of one way to the upstream under one load. */
export interface ViaRow {
  provider: ProviderName;
  load: Load;
  via: Via;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** This way's p50 / p99 minus the direct one's, same round (median over rounds); 0 for direct. */
  addedP50Ms: number;
  addedP99Ms: number;
  firstByteP50Ms: number;
  firstByteP99Ms: number;
  /** CPU time (user + system) of the relay process per request: the pass-through or tpx serve. */
  relayCpuUsPerRequest: number;
  /** CPU time of the upstream process per request (the same work whichever way the request came). */
  upstreamCpuUsPerRequest: number;
  /** Requests answered over all rounds, warm-ups included. */
  totalRequests: number;
  errors: number;
}

export interface ProxyRatios {
  provider: ProviderName;
  /** tpx serve added p50 / pass-through added p50, json c=1. */
  addedLatencyRatio: number;
  /** The same at 16 connections (informational). */
  addedLatencyRatioC16: number;
  /** tpx serve requests/s / pass-through requests/s, json c=16. */
  throughputRatio: number;
  /** tpx serve first-byte p50 / pass-through first-byte p50, stream c=16. */
  firstByteRatio: number;
  /** tpx serve total stream p50 / pass-through, stream c=16 (informational). */
  streamTotalRatio: number;
  /** tpx serve CPU time per request / the pass-through's, json c=16 (informational). */
  cpuRatio: number;
  /** The same, stream c=16 (informational). */
  cpuRatioStream: number;
  /** Each ratio in each round (the fields above are their medians). */
  perRound: Record<RatioName, number[]>;
}

type RatioName =
  | 'addedLatencyRatio'
  | 'addedLatencyRatioC16'
  | 'throughputRatio'
  | 'firstByteRatio'
  | 'streamTotalRatio'
  | 'cpuRatio'
  | 'cpuRatioStream';

export interface ProxyResult {
  rows: ViaRow[];
  ratios: ProxyRatios[];
  tables: Table[];
}

interface Setup {
  targets: (via: Via, stream: boolean) => LoadTarget;
  /** The upstream, and the relay of each way (none for direct). */
  upstream: ChildServer;
  relays: Record<'pass-through' | 'tpx serve', ChildServer>;
  servers: ChildServer[];
}

const MESSAGES_HEADERS = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' };

async function setUp(provider: ProviderName, options: ProxyOptions): Promise<Setup> {
  /** `--cpu-prof` for a relay, with a file name that says which one it is. */
  const profileFlags = (via: string) =>
    options.cpuProfileDir === undefined
      ? []
      : [
          '--cpu-prof',
          `--cpu-prof-dir=${options.cpuProfileDir}`,
          `--cpu-prof-name=${provider}-${via}.cpuprofile`,
        ];
  if (provider === 'tpx') {
    const mock = await spawnServer({
      script: 'src/cli.ts',
      args: ['mock-model', '--port', '0'],
      env: cleanEnv({}),
    });
    const [pass, serve] = await Promise.all([
      spawnServer({
        script: 'bench/servers/pass-through.ts',
        args: [mock.origin],
        env: cleanEnv({}),
        nodeFlags: profileFlags('pass-through'),
      }),
      spawnServer({
        script: 'src/cli.ts',
        args: ['serve', '--port', '0'],
        env: cleanEnv({ TPX_OAUTH_TOKEN: 'bench-token', TPX_BASE_URL: mock.url }),
        discardStdout: true,
        nodeFlags: profileFlags('serve'),
      }),
    ]);
    const upstreamPath = `${new URL(mock.url).pathname}/chat/completions`;
    return {
      upstream: mock,
      relays: { 'pass-through': pass, 'tpx serve': serve },
      servers: [serve, pass, mock],
      targets(via, stream) {
        const messages = shortPrompt({ stream });
        if (via === 'tpx serve') {
          return {
            origin: serve.origin,
            path: '/v1/messages',
            headers: { ...MESSAGES_HEADERS, 'x-api-key': 'unused' },
            body: JSON.stringify(messages),
          };
        }
        // What tpx serve itself sends upstream for this request.
        const chat = translateRequest(messages, { model: messages.model }).body;
        return {
          origin: via === 'direct' ? mock.origin : pass.origin,
          path: upstreamPath,
          headers: {
            'content-type': 'application/json',
            accept: stream ? 'text/event-stream' : 'application/json',
            authorization: 'Bearer bench-token',
          },
          body: JSON.stringify(chat),
        };
      },
    };
  }
  const mock = await spawnServer({ script: 'bench/servers/anthropic-mock.ts', env: cleanEnv({}) });
  const [pass, serve] = await Promise.all([
    spawnServer({
      script: 'bench/servers/pass-through.ts',
      args: [mock.origin],
      env: cleanEnv({}),
      nodeFlags: profileFlags('pass-through'),
    }),
    spawnServer({
      script: 'src/cli.ts',
      args: ['serve', '--port', '0'],
      env: cleanEnv({ ANTHROPIC_API_KEY: 'bench-key', ANTHROPIC_BASE_URL: mock.origin }),
      discardStdout: true,
      nodeFlags: profileFlags('serve'),
    }),
  ]);
  return {
    upstream: mock,
    relays: { 'pass-through': pass, 'tpx serve': serve },
    servers: [serve, pass, mock],
    targets(via, stream) {
      const origin = via === 'direct' ? mock.origin : via === 'pass-through' ? pass.origin : serve.origin;
      const key = via === 'tpx serve' ? 'unused' : 'bench-key';
      return {
        origin,
        path: '/v1/messages',
        headers: { ...MESSAGES_HEADERS, 'x-api-key': key },
        body: JSON.stringify(shortPrompt({ stream })),
      };
    },
  };
}

/** One request per way and load, checked, before anything is timed. */
async function checkTargets(provider: ProviderName, setup: Setup): Promise<void> {
  for (const via of VIAS) {
    for (const stream of [false, true]) {
      const target = setup.targets(via, stream);
      const response = await request(`${target.origin}${target.path}`, {
        method: 'POST',
        headers: target.headers,
        body: target.body,
      });
      const text = await response.body.text();
      const expected = stream
        ? via === 'tpx serve' || provider === 'anthropic'
          ? 'message_stop'
          : '[DONE]'
        : 'You said';
      if (response.statusCode !== 200 || !text.includes(expected)) {
        throw new Error(
          `${provider} ${via} ${stream ? 'stream' : 'json'}: status ${response.statusCode}, body ${text.slice(0, 300)}`,
        );
      }
    }
  }
}

/** One load run, with the CPU time the relay and the upstream used per request during it. */
interface Measurement extends LoadResult {
  relayCpuUsPerRequest: number;
  upstreamCpuUsPerRequest: number;
}

type Measurements = Map<string, Measurement[]>;
const key = (load: Load, via: Via) => `${load} | ${via}`;

/** Runs benchmark 3 for one provider, on servers already started. */
async function runProvider(
  provider: ProviderName,
  setup: Setup,
  options: ProxyOptions,
): Promise<{ rows: ViaRow[]; ratios: ProxyRatios }> {
  await checkTargets(provider, setup);
  const measurements: Measurements = new Map();
  for (let round = 0; round < options.rounds; round++) {
    for (const load of LOADS) {
      const order = VIAS.map((_, index) => VIAS[(index + round) % VIAS.length]!);
      for (const via of order) {
        const relay = via === 'direct' ? undefined : setup.relays[via];
        const relayCpuBefore = relay?.cpuMs() ?? 0;
        const upstreamCpuBefore = setup.upstream.cpuMs();
        const loadResult = await runLoad(setup.targets(via, load.stream), {
          connections: load.connections,
          warmupMs: options.warmupMs,
          durationMs: options.durationMs,
        });
        const perRequest = (ms: number) => (ms * 1000) / loadResult.completedTotal;
        const result: Measurement = {
          ...loadResult,
          relayCpuUsPerRequest: relay === undefined ? 0 : perRequest(relay.cpuMs() - relayCpuBefore),
          upstreamCpuUsPerRequest: perRequest(setup.upstream.cpuMs() - upstreamCpuBefore),
        };
        if (result.requests === 0) {
          throw new Error(
            `${provider} ${load.name} ${via}: no request completed (${result.errors} errors: ${result.firstError ?? 'none'})`,
          );
        }
        const list = measurements.get(key(load.name, via)) ?? [];
        list.push(result);
        measurements.set(key(load.name, via), list);
      }
    }
  }
  return summarise(provider, measurements);
}

function summarise(
  provider: ProviderName,
  measurements: Measurements,
): { rows: ViaRow[]; ratios: ProxyRatios } {
  const get = (load: Load, via: Via) => measurements.get(key(load, via))!;
  /** Median over rounds of `metric(round)`. */
  const perRound = (load: Load, metric: (round: number) => number) =>
    median(get(load, 'direct').map((_, index) => metric(index)));
  const rows: ViaRow[] = [];
  for (const load of LOADS) {
    for (const via of VIAS) {
      const results = get(load.name, via);
      const direct = get(load.name, 'direct');
      rows.push({
        provider,
        load: load.name,
        via,
        requestsPerSecond: round(median(results.map((result) => result.throughput)), 4),
        p50Ms: round(median(results.map((result) => result.latency.p50))),
        p99Ms: round(median(results.map((result) => result.latency.p99))),
        addedP50Ms: round(
          perRound(load.name, (index) => results[index]!.latency.p50 - direct[index]!.latency.p50),
        ),
        addedP99Ms: round(
          perRound(load.name, (index) => results[index]!.latency.p99 - direct[index]!.latency.p99),
        ),
        firstByteP50Ms: round(median(results.map((result) => result.firstByte.p50))),
        firstByteP99Ms: round(median(results.map((result) => result.firstByte.p99))),
        relayCpuUsPerRequest: round(median(results.map((result) => result.relayCpuUsPerRequest)), 3),
        upstreamCpuUsPerRequest: round(median(results.map((result) => result.upstreamCpuUsPerRequest)), 3),
        totalRequests: results.reduce((sum, result) => sum + result.completedTotal, 0),
        errors: results.reduce((sum, result) => sum + result.errors, 0),
      });
    }
  }
  const values = (load: Load, metric: (round: number) => number) =>
    get(load, 'direct').map((_, index) => metric(index));
  const addedRatios = (load: Load) =>
    values(load, (index) => {
      const direct = get(load, 'direct')[index]!.latency.p50;
      return (
        (get(load, 'tpx serve')[index]!.latency.p50 - direct) /
        (get(load, 'pass-through')[index]!.latency.p50 - direct)
      );
    });
  const viaRatios = (load: Load, metric: (result: Measurement) => number) =>
    values(
      load,
      (index) => metric(get(load, 'tpx serve')[index]!) / metric(get(load, 'pass-through')[index]!),
    );
  const perRoundRatios = {
    addedLatencyRatio: addedRatios('json c=1'),
    addedLatencyRatioC16: addedRatios('json c=16'),
    throughputRatio: viaRatios('json c=16', (result) => result.throughput),
    firstByteRatio: viaRatios('stream c=16', (result) => result.firstByte.p50),
    streamTotalRatio: viaRatios('stream c=16', (result) => result.latency.p50),
    cpuRatio: viaRatios('json c=16', (result) => result.relayCpuUsPerRequest),
    cpuRatioStream: viaRatios('stream c=16', (result) => result.relayCpuUsPerRequest),
  };
  const medianRatio = (list: number[]) => round(median(list), 3);
  const ratios: ProxyRatios = {
    provider,
    addedLatencyRatio: medianRatio(perRoundRatios.addedLatencyRatio),
    addedLatencyRatioC16: medianRatio(perRoundRatios.addedLatencyRatioC16),
    throughputRatio: medianRatio(perRoundRatios.throughputRatio),
    firstByteRatio: medianRatio(perRoundRatios.firstByteRatio),
    streamTotalRatio: medianRatio(perRoundRatios.streamTotalRatio),
    cpuRatio: medianRatio(perRoundRatios.cpuRatio),
    cpuRatioStream: medianRatio(perRoundRatios.cpuRatioStream),
    perRound: {
      addedLatencyRatio: perRoundRatios.addedLatencyRatio.map((value) => round(value, 3)),
      addedLatencyRatioC16: perRoundRatios.addedLatencyRatioC16.map((value) => round(value, 3)),
      throughputRatio: perRoundRatios.throughputRatio.map((value) => round(value, 3)),
      firstByteRatio: perRoundRatios.firstByteRatio.map((value) => round(value, 3)),
      streamTotalRatio: perRoundRatios.streamTotalRatio.map((value) => round(value, 3)),
      cpuRatio: perRoundRatios.cpuRatio.map((value) => round(value, 3)),
      cpuRatioStream: perRoundRatios.cpuRatioStream.map((value) => round(value, 3)),
    },
  };
  return { rows, ratios };
}

/** Runs benchmark 3 for both providers. */
export async function runProxy(options: ProxyOptions): Promise<ProxyResult> {
  const rows: ViaRow[] = [];
  const ratios: ProxyRatios[] = [];
  // Every server starts at once (starting one costs a couple of CPU-seconds); idle ones cost nothing
  // while the others are measured.
  const started = await Promise.allSettled(PROVIDERS.map((provider) => setUp(provider, options)));
  try {
    for (const [index, provider] of PROVIDERS.entries()) {
      const setup = started[index]!;
      if (setup.status === 'rejected') throw setup.reason;
      const result = await runProvider(provider, setup.value, options);
      rows.push(...result.rows);
      ratios.push(result.ratios);
    }
  } finally {
    const servers = started.flatMap((setup) => (setup.status === 'fulfilled' ? setup.value.servers : []));
    await Promise.all(servers.map((server) => server.stop()));
  }
  const measurements: Table = {
    title: 'Proxy: direct vs pass-through vs tpx serve (medians over rounds)',
    header: [
      'provider',
      'load',
      'via',
      'req/s',
      'p50',
      'p99',
      'added p50',
      'added p99',
      'first byte p50',
      'first byte p99',
      'relay CPU/req',
      'upstream CPU/req',
    ],
    rows: rows.map((row) => [
      row.provider,
      row.load,
      row.via,
      row.requestsPerSecond.toFixed(0),
      formatDuration(row.p50Ms),
      formatDuration(row.p99Ms),
      row.via === 'direct' ? '' : formatDuration(row.addedP50Ms),
      row.via === 'direct' ? '' : formatDuration(row.addedP99Ms),
      row.load.startsWith('stream') ? formatDuration(row.firstByteP50Ms) : '',
      row.load.startsWith('stream') ? formatDuration(row.firstByteP99Ms) : '',
      row.via === 'direct' ? '' : formatDuration(row.relayCpuUsPerRequest / 1000),
      formatDuration(row.upstreamCpuUsPerRequest / 1000),
    ]),
    notes: [
      'p50/p99: send to end of body. added: minus direct, same round. first byte: send to first body chunk.',
      'CPU/req: user + system CPU time of that process during the load (warm-up included) over the requests it',
      'answered, from /proc (10 ms ticks); the relay is the pass-through or tpx serve.',
      ...rows
        .filter((row) => row.errors > 0)
        .map((row) => `${row.provider} ${row.load} ${row.via}: ${row.errors} failed requests`),
    ],
  };
  const line = (
    ratio: ProxyRatios,
    name: RatioName,
    measure: string,
    target?: { max?: number; min?: number },
  ) => [
    ratio.provider,
    measure,
    formatRatio(ratio[name]),
    ratio.perRound[name].map((value) => value.toFixed(2)).join(' / '),
    target === undefined ? '(info)' : target.max === undefined ? `≥ ${target.min}×` : `≤ ${target.max}×`,
    target === undefined ? '' : verdict(ratio[name], target),
  ];
  const summary: Table = {
    title: 'Proxy ratios: tpx serve vs the bare pass-through (median of per-round ratios)',
    header: ['provider', 'measure', 'ratio', 'each round', 'target', 'verdict'],
    rows: ratios.flatMap((ratio) => [
      line(ratio, 'addedLatencyRatio', 'added latency p50, json c=1', {
        max: PROXY_TARGETS.addedLatencyRatio,
      }),
      line(ratio, 'addedLatencyRatioC16', 'added latency p50, json c=16'),
      line(ratio, 'throughputRatio', 'throughput, json c=16', { min: PROXY_TARGETS.throughputRatio }),
      line(ratio, 'firstByteRatio', 'first byte p50, stream c=16', { max: PROXY_TARGETS.firstByteRatio }),
      line(ratio, 'streamTotalRatio', 'whole stream p50, stream c=16'),
      line(ratio, 'cpuRatio', 'relay CPU per request, json c=16'),
      line(ratio, 'cpuRatioStream', 'relay CPU per request, stream c=16'),
    ]),
  };
  return { rows, ratios, tables: [summary, measurements] };
}
