/**
 * Compares any `tpx serve` configurations the way the observability benchmark judges its target: fleet
 * rounds (`bench/harness/fleet-rounds.ts`), each round a fresh process of every configuration, warmed
 * up, then sent the same fixed-rate load at the same time. Prints each configuration's CPU per request
 * and its ratio to the first one (every thread, and the main thread alone), the median of the
 * per-round ratios, with each round's ratio.
 *
 * ```
 * npx tsx bench/profile/fleet-compare.ts <req/s per process> <rounds> '<name>|<serve flags>|<VAR=value,…>' …
 * # where the cost of tracing comes from: OpenTelemetry's metrics alone, spans without their export
 * R=OTEL_EXPORTER_OTLP_ENDPOINT=RECEIVER
 * npx tsx bench/profile/fleet-compare.ts 70 9 'off|--no-metrics|' 'metrics||' \
 *   "otel metrics||$R,OTEL_TRACES_EXPORTER=none" "tracing||$R" \
 *   "not exported||$R,OTEL_BSP_MAX_QUEUE_SIZE=100000,OTEL_BSP_MAX_EXPORT_BATCH_SIZE=100000,OTEL_BSP_SCHEDULE_DELAY=600000"
 * ```
 *
 * The value `RECEIVER` stands for the origin of an OTLP/HTTP receiver on loopback started here
 * (`bench/servers/otlp-receiver.ts`). Every process serves the tpx provider in front of one
 * `tpx mock-model`. `TPX_BENCH_STREAM=1` sends streaming requests. The request is the one-line prompt,
 * or with `TPX_BENCH_CONVERSATION=small|medium|large` an agent's conversation of that size
 * (`bench/inputs/conversations.ts`: `small` is the suite's agent turn, 12 KiB with 16 tools; `medium`
 * is 40 turns later, 115 KiB).
 * `TPX_BENCH_WARMUP_REQUESTS` / `TPX_BENCH_WARMUP_MS` set the warm-up, `TPX_BENCH_DURATION_MS` and
 * `TPX_BENCH_MIN_REQUESTS` the measured window (`fleet-rounds.ts`); the benchmark's own are 3,000
 * requests, 3,000 ms and 1,000 requests.
 * A configuration's `TPX_BENCH_SERVE_SCRIPT=<absolute path>` runs that built CLI instead of this tree's
 * (another commit's `dist/cli.js`, built in a worktree of its own), to compare two versions of the code
 * side by side; its flags must be ones that version knows.
 * `TPX_BENCH_CPU_PROF_DIR=<dir>` runs every `tpx serve` under `--cpu-prof`, one profile per process and
 * round (`<name>-round-<n>.cpuprofile`), for `telemetry-share.ts` or `summarise-profile.ts`: the
 * profiler's own cost then weighs on the ratios, which are no longer the benchmark's.
 *
 * @module
 */
import { cleanEnv, spawnServer, type ChildServer } from '../harness/children.js';
import { runFleetRounds } from '../harness/fleet-rounds.js';
import { median } from '../harness/stats.js';
import { CONVERSATION_SIZES, conversation, shortPrompt } from '../inputs/conversations.js';

const [rate = '', rounds = '', ...specs] = process.argv.slice(2);
if (!(Number(rate) > 0) || !(Number(rounds) > 0) || specs.length < 2) {
  process.stderr.write(
    "usage: fleet-compare.ts <req/s per process> <rounds> '<name>|<serve flags>|<VAR=value,…>' (two or more)\n",
  );
  process.exit(2);
}

const upstream = await spawnServer({
  script: 'src/cli.ts',
  args: ['mock-model', '--port', '0'],
  env: cleanEnv({}),
});
const receiver = await spawnServer({ script: 'bench/servers/otlp-receiver.ts', env: cleanEnv({}) });
try {
  const configurations = new Map(
    specs.map((spec) => {
      const [name = '', flags = '', variables = ''] = spec.split('|');
      const env: Record<string, string> = {};
      for (const assignment of variables.split(',').filter((each) => each !== '')) {
        const equals = assignment.indexOf('=');
        const value = assignment.slice(equals + 1);
        env[assignment.slice(0, equals)] = value === 'RECEIVER' ? receiver.origin : value;
      }
      return [name, { flags: flags.split(' ').filter((each) => each !== ''), env }];
    }),
  );
  if (configurations.size !== specs.length) throw new Error('each configuration needs a name of its own');
  const names = [...configurations.keys()];
  const stream = process.env['TPX_BENCH_STREAM'] === '1';
  const sizeName = process.env['TPX_BENCH_CONVERSATION'];
  const size = CONVERSATION_SIZES.find((each) => each === sizeName);
  if (sizeName !== undefined && size === undefined) {
    throw new Error(`TPX_BENCH_CONVERSATION is ${sizeName}: one of ${CONVERSATION_SIZES.join(', ')}`);
  }
  const body = JSON.stringify(size === undefined ? shortPrompt({ stream }) : conversation(size, { stream }));
  const headers = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'x' };
  const profileDir = process.env['TPX_BENCH_CPU_PROF_DIR'];
  let round = 0;
  const measurements = await runFleetRounds(
    names,
    async (order) => {
      round += 1;
      const started = await Promise.all(
        order.map((name) => {
          const configuration = configurations.get(name)!;
          return spawnServer({
            script: configuration.env['TPX_BENCH_SERVE_SCRIPT'] ?? 'src/cli.ts',
            args: ['serve', '--port', '0', ...configuration.flags],
            env: cleanEnv({
              TPX_OAUTH_TOKEN: 'bench-token',
              TPX_BASE_URL: upstream.url,
              ...configuration.env,
            }),
            discardStdout: true,
            ...(profileDir === undefined
              ? {}
              : {
                  nodeFlags: [
                    '--cpu-prof',
                    '--cpu-prof-interval=200',
                    `--cpu-prof-dir=${profileDir}`,
                    `--cpu-prof-name=${name.replace(/[^\w.-]+/g, '_')}-round-${round}.cpuprofile`,
                  ],
                }),
          });
        }),
      );
      return new Map(order.map((name, index): [string, ChildServer] => [name, started[index]!]));
    },
    [{ name: 'prompt', stream, ratePerSecond: Number(rate) }],
    (server) => ({ origin: server.origin, path: '/v1/messages', headers, body }),
    {
      rounds: Number(rounds),
      warmupMs: Number(process.env['TPX_BENCH_WARMUP_MS'] ?? 1_500),
      warmupRequests: Number(process.env['TPX_BENCH_WARMUP_REQUESTS'] ?? 0),
      durationMs: Number(process.env['TPX_BENCH_DURATION_MS'] ?? 3_000),
      minMeasuredRequests: Number(process.env['TPX_BENCH_MIN_REQUESTS'] ?? 0),
      maxInFlight: 64,
    },
  );
  const byName = measurements.get('prompt')!;
  const first = byName.get(names[0]!)!;
  const width = Math.max(...names.map((name) => name.length));
  for (const name of names) {
    const runs = byName.get(name)!;
    const ratios = runs.map((run, round) => run.cpuUsPerRequest / first[round]!.cpuUsPerRequest);
    const mainRatios = runs.map(
      (run, round) => run.mainThreadCpuUsPerRequest / first[round]!.mainThreadCpuUsPerRequest,
    );
    process.stdout.write(
      `${name.padEnd(width)}  ${median(runs.map((run) => run.cpuUsPerRequest)).toFixed(0)} µs/req  ${median(ratios).toFixed(3)}×  main thread ${median(mainRatios).toFixed(3)}×  rounds ${ratios.map((ratio) => ratio.toFixed(2)).join(' ')}\n`,
    );
  }
} finally {
  await upstream.stop();
  await receiver.stop();
}
