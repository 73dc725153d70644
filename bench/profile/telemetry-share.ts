/**
 * How much of a profiled `tpx serve`'s work is its telemetry, counting callees: a sample belongs to
 * OpenTelemetry when any frame of its stack is OpenTelemetry's or `src/telemetry/genai-telemetry.ts`'s
 * (so the `JSON.stringify`, `Date.now()` and socket writes they call are theirs), to the Prometheus
 * metrics when any frame is prom-client's or `src/telemetry/metrics.ts`'s; garbage collection and the rest are what is
 * left. The self-time summary (`summarise-profile.ts`) cannot say this: most of the SDK's time is spent
 * in small functions spread over five packages, and in Node's own code beneath them.
 *
 * The shares count samples, not the time between them: under a heavily loaded machine a thread that
 * waits for a core is not sampled meanwhile, but the time deltas include the wait, which would
 * overweight whatever ran just before it. Start-up is left out: the window starts a second after the
 * first sample inside the messages handler (the load's warm-up).
 *
 * ```
 * TPX_BENCH_OBSERVABILITY=tracing npx tsx bench/profile/one-load.ts tpx json 16 8 /tmp/one
 * npx tsx bench/profile/telemetry-share.ts /tmp/one/serve.cpuprofile [--cpu-us-per-request=N] [--warm-up=<s>]
 * ```
 *
 * CPU per request falls by half over a fresh process's first few thousand exchanges, while the compiler
 * optimises their code; `--warm-up=30` leaves out the first 30 s after the first exchange, to see what a
 * process in service spends.
 *
 * With the process's CPU time per request (one-load.ts prints it as `relay CPU`), each share is also
 * shown as microseconds per request: the profile-based cost of the telemetry in the proxy, which moves
 * far less with the machine's load than a side-by-side ratio does.
 *
 * @module
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

type Part =
  | 'OpenTelemetry: spans'
  | 'OpenTelemetry: GenAI histograms'
  | 'OpenTelemetry: OTLP export'
  | 'Prometheus metrics'
  | 'garbage collection'
  | 'everything else';

const args = process.argv.slice(2);
const path = args.find((arg) => arg.endsWith('.cpuprofile'));
if (path === undefined) {
  throw new Error('usage: telemetry-share.ts <serve.cpuprofile> [--cpu-us-per-request=N]');
}
const cpuUsPerRequest = Number(
  args.find((arg) => arg.startsWith('--cpu-us-per-request='))?.split('=')[1] ?? Number.NaN,
);
const top = Number(args.find((arg) => arg.startsWith('--top='))?.split('=')[1] ?? 0);
/**
 * Left out after the first exchange: a second by default; `--warm-up=<s>` to count a warmed-up process
 * only.
 */
const WARM_UP_US = Number(args.find((arg) => arg.startsWith('--warm-up='))?.split('=')[1] ?? 1) * 1_000_000;

const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

/** The part a frame itself names, if any. */
function ownPart(node: ProfileNode): Part | undefined {
  const { url, functionName } = node.callFrame;
  if (url === '' && functionName === '(garbage collector)') return 'garbage collection';
  if (/@opentelemetry\/(otlp-|exporter-)/.test(url)) return 'OpenTelemetry: OTLP export';
  if (url.includes('@opentelemetry/sdk-metrics')) return 'OpenTelemetry: GenAI histograms';
  if (url.includes('@opentelemetry/') || url.includes('telemetry/genai-telemetry.')) {
    return 'OpenTelemetry: spans';
  }
  if (url.includes('/prom-client/') || url.includes('telemetry/metrics.')) return 'Prometheus metrics';
  return undefined;
}

const partOfNode = new Map<number, Part>();
/** The part of a sample: the innermost frame that names one (a histogram record inside genai-telemetry.ts is a histogram's). */
function partOf(id: number): Part {
  const known = partOfNode.get(id);
  if (known !== undefined) return known;
  const node = byId.get(id)!;
  const parent = parentOf.get(id);
  const part = ownPart(node) ?? (parent === undefined ? 'everything else' : partOf(parent));
  partOfNode.set(id, part);
  return part;
}

function isInHandler(id: number): boolean {
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    if (byId.get(at)!.callFrame.url.includes('server/messages-handler.')) return true;
  }
  return false;
}

let clockUs = 0;
let windowStartUs = Number.POSITIVE_INFINITY;
const counts = new Map<Part, number>();
/** Self samples by `function (file)` within each part, for `--top`. */
const selfByPart = new Map<Part, Map<string, number>>();
let busy = 0;
profile.samples.forEach((id, index) => {
  clockUs += profile.timeDeltas[index] ?? 0;
  if (!Number.isFinite(windowStartUs) && isInHandler(id)) windowStartUs = clockUs + WARM_UP_US;
  if (clockUs < windowStartUs) return;
  const { url, functionName } = byId.get(id)!.callFrame;
  if (url === '' && (functionName === '(idle)' || functionName === '(program)')) return;
  busy += 1;
  const part = partOf(id);
  counts.set(part, (counts.get(part) ?? 0) + 1);
  const frames = selfByPart.get(part) ?? new Map<string, number>();
  selfByPart.set(part, frames);
  const name = `${functionName || '(anonymous)'} (${url.replace(/^.*node_modules\//, '').replace(/^file:.*\/(src|bench)\//, '$1/') || 'native'})`;
  frames.set(name, (frames.get(name) ?? 0) + 1);
});

process.stdout.write(`${path}: ${busy} busy samples after the warm-up (callees counted with their caller)\n`);
for (const [part, count] of [...counts].sort((a, b) => b[1] - a[1])) {
  const share = count / busy;
  const perRequest = Number.isFinite(cpuUsPerRequest)
    ? `  ${(share * cpuUsPerRequest).toFixed(0).padStart(6)} µs/req`
    : '';
  process.stdout.write(`${(100 * share).toFixed(1).padStart(5)}%${perRequest}  ${part}\n`);
  if (part === 'everything else') continue;
  const frames = [...selfByPart.get(part)!].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, self] of frames) {
    process.stdout.write(`        ${((100 * self) / busy).toFixed(1).padStart(5)}%  ${name}\n`);
  }
}
