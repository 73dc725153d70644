/**
 * What the proxy's telemetry alone costs per exchange, without the proxy around it: the calls an
 * exchange makes on its `ExchangeTelemetry` (start, one upstream attempt, the end with usage and a
 * stop reason), in this process, for the Prometheus metrics, OpenTelemetry (spans and the GenAI
 * histograms, exported over OTLP/HTTP to a receiver on loopback in a child process), and both. CPU time
 * of this process per exchange, including the exports' serialisation and sending (each measure ends
 * with a flush of what is still buffered), medians over rounds in rotating order.
 *
 * ```
 * npx tsx bench/profile/telemetry-cost.ts [exchanges per round = 20000] [rounds = 5]
 * node --cpu-prof … (or `npx tsx --cpu-prof …`) to see inside one variant: TPX_BENCH_TELEMETRY=tracing
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json npx tsx bench/profile/telemetry-cost.ts   # OTEL_* variables are passed on
 * ```
 *
 * The observability target is at most 0.25 ms of CPU per exchange for metrics and tracing together,
 * measured through a real `tpx serve` by the observability benchmark; this is the same cost without
 * the proxy around it.
 *
 * @module
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { createProxyMetrics } from '../../src/telemetry/metrics.js';
import type { ExchangeRecord } from '../../src/server/logger.js';
import { combineTelemetry, type Telemetry } from '../../src/telemetry/exchange-telemetry.js';
import { startTracing, type Tracing } from '../../src/telemetry/tracing.js';
import { cleanEnv, spawnServer } from '../harness/children.js';
import { median } from '../harness/stats.js';

const exchanges = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 5);
/** Exchanges between two turns of the event loop (timers and exports run there, as in the proxy). */
const BURST = 16;

const receiver = await spawnServer({ script: 'bench/servers/otlp-receiver.ts', env: cleanEnv({}) });

/** The `OTEL_*` variables of this process (a protocol, batch sizes), passed on to the tracing started here. */
const otelVariables = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_')),
) as Record<string, string>;

interface Running {
  telemetry: Telemetry;
  tracing?: Tracing;
}

type VariantName = 'metrics' | 'tracing' | 'metrics + tracing';

async function start(name: VariantName): Promise<Running> {
  const metrics =
    name === 'tracing' ? undefined : createProxyMetrics({ provider: 'tpx', collectProcessMetrics: false });
  const tracing =
    name === 'metrics'
      ? undefined
      : await startTracing(
          {
            OTEL_METRIC_EXPORT_INTERVAL: '5000',
            ...otelVariables,
            OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
          },
          { providerName: 'openai-compatible', version: '0.0.0' },
        );
  const telemetry = combineTelemetry(metrics, tracing)!;
  return tracing === undefined ? { telemetry } : { telemetry, tracing };
}

const headers = {
  host: '127.0.0.1:4000',
  'content-type': 'application/json',
  'anthropic-version': '2023-06-01',
  'x-api-key': 'unused',
  'content-length': '180',
};

function oneExchange(telemetry: Telemetry, index: number): void {
  const exchange = telemetry.startExchange({ method: 'POST', path: '/v1/messages', headers });
  const attempt = { number: 1, provider: 'tpx' as const };
  exchange.observer?.onAttemptStart?.(attempt);
  exchange.observer?.onAttemptEnd?.({ ...attempt, status: 200, upstreamModel: 'mock-model', durationMs: 3 });
  const record: ExchangeRecord = {
    requestId: `req_${index}`,
    method: 'POST',
    path: '/v1/messages',
    provider: 'tpx',
    status: 200,
    durationMs: 4.2,
    model: 'claude-sonnet-4-5',
    upstreamModel: 'mock-model',
    stream: false,
    attempts: 1,
    usage: { input_tokens: 25, output_tokens: 12 },
  };
  exchange.end({ record, stopReason: 'end_turn', timeToFirstByteMs: 4 });
}

async function measure(name: VariantName): Promise<number> {
  const running = await start(name);
  for (let index = 0; index < 2_000; index++) oneExchange(running.telemetry, index);
  await yieldToLoop();
  const before = process.cpuUsage();
  for (let index = 0; index < exchanges; index++) {
    oneExchange(running.telemetry, index);
    if (index % BURST === BURST - 1) await yieldToLoop();
  }
  await running.tracing?.shutdown();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / exchanges;
}

const only = process.env['TPX_BENCH_TELEMETRY'] as VariantName | undefined;
const names: VariantName[] = only === undefined ? ['metrics', 'tracing', 'metrics + tracing'] : [only];
const results = new Map<VariantName, number[]>(names.map((name) => [name, []]));
for (let round = 0; round < rounds; round++) {
  for (let offset = 0; offset < names.length; offset++) {
    const name = names[(round + offset) % names.length]!;
    results.get(name)!.push(await measure(name));
  }
}
for (const [name, values] of results) {
  process.stdout.write(
    `${name.padEnd(18)} ${median(values).toFixed(1).padStart(6)} µs/exchange  (rounds: ${values.map((value) => value.toFixed(1)).join(' / ')})\n`,
  );
}
const stats = await (await fetch(`${receiver.origin}/stats`)).json();
process.stdout.write(`receiver: ${JSON.stringify(stats)}\n`);
await receiver.stop();
