/**
 * Profiles `tpx serve` under one load only (the full proxy benchmark mixes three): starts the upstream
 * and the proxy as the proxy benchmark does, with `--cpu-prof`, runs the load, and stops them.
 *
 * ```
 * npx tsx bench/profile/one-load.ts <tpx|anthropic> <json|stream> <connections> <seconds> <profile dir>
 * npx tsx bench/profile/summarise-profile.ts <dir>/serve.cpuprofile 40
 * ```
 *
 * `TPX_BENCH_OBSERVABILITY` picks what the proxy observes, as the observability benchmark's variants do:
 * `metrics` (the default, as `tpx serve` starts), `off` (`--no-metrics`), or `tracing` (metrics, and
 * OpenTelemetry aimed at an OTLP/HTTP receiver on loopback, `bench/servers/otlp-receiver.ts`).
 *
 * @module
 */
import { translateRequest } from '../../src/translate/translate-request.js';
import { cleanEnv, spawnServer } from '../harness/children.js';
import { runLoad } from '../harness/load.js';
import { shortPrompt } from '../inputs/conversations.js';

const [provider = 'tpx', kind = 'json', connections = '1', seconds = '8', dir = '/tmp/tpx-prof'] =
  process.argv.slice(2);
const stream = kind === 'stream';
/** More flags for the relay's node, e.g. `TPX_BENCH_NODE_FLAGS="--log-deopt --logfile=/tmp/v8.log"`. */
const extraFlags = (process.env['TPX_BENCH_NODE_FLAGS'] ?? '').split(' ').filter((flag) => flag !== '');
const profile =
  process.env['TPX_BENCH_NO_PROFILE'] === '1'
    ? extraFlags
    : [...extraFlags, '--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-name=serve.cpuprofile'];
const upstream =
  provider === 'tpx'
    ? await spawnServer({ script: 'src/cli.ts', args: ['mock-model', '--port', '0'], env: cleanEnv({}) })
    : await spawnServer({ script: 'bench/servers/anthropic-mock.ts', env: cleanEnv({}) });
const viaPassThrough = process.env['TPX_BENCH_VIA'] === 'pass-through';
const observability = process.env['TPX_BENCH_OBSERVABILITY'] ?? 'metrics';
const receiver =
  observability === 'tracing'
    ? await spawnServer({ script: 'bench/servers/otlp-receiver.ts', env: cleanEnv({}) })
    : undefined;
const observabilityEnv: Record<string, string> =
  receiver === undefined
    ? {}
    : {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
        OTEL_METRIC_EXPORT_INTERVAL: '5000',
        OTEL_SERVICE_NAME: 'tpx-bench',
      };
const serve = await spawnServer({
  script: viaPassThrough ? 'bench/servers/pass-through.ts' : 'src/cli.ts',
  args: viaPassThrough
    ? [upstream.origin]
    : ['serve', '--port', '0', ...(observability === 'off' ? ['--no-metrics'] : [])],
  env: cleanEnv({
    ...(provider === 'tpx'
      ? { TPX_OAUTH_TOKEN: 'bench-token', TPX_BASE_URL: upstream.url }
      : { ANTHROPIC_API_KEY: 'bench-key', ANTHROPIC_BASE_URL: upstream.origin }),
    ...observabilityEnv,
  }),
  discardStdout: true,
  nodeFlags: profile,
});
const cpuBefore = serve.cpuMs();
const messages = shortPrompt({ stream });
const target =
  viaPassThrough && provider === 'tpx'
    ? {
        origin: serve.origin,
        path: `${new URL(upstream.url).pathname}/chat/completions`,
        headers: { 'content-type': 'application/json', authorization: 'Bearer bench-token' },
        body: JSON.stringify(translateRequest(messages, { model: messages.model }).body),
      }
    : {
        origin: serve.origin,
        path: '/v1/messages',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'x' },
        body: JSON.stringify(messages),
      };
const result = await runLoad(target, {
  connections: Number(connections),
  warmupMs: 500,
  durationMs: Number(seconds) * 1000,
});
const cpu = serve.cpuMs() - cpuBefore;
console.log(
  `${provider} ${kind} c=${connections}: ${result.completedTotal} requests, ${Math.round(result.throughput)} req/s, p50 ${(result.latency.p50 * 1000).toFixed(0)} µs, relay CPU ${((cpu * 1000) / result.completedTotal).toFixed(0)} µs/req, errors ${result.errors}`,
);
await serve.stop();
await upstream.stop();
await receiver?.stop();
