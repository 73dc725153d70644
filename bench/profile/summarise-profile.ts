/**
 * Summarises a V8 CPU profile (`node --cpu-prof` writes `*.cpuprofile`): the functions with the most
 * self time (named `file:function`), and the self time by area (a layer of this library, a package,
 * Node's own JavaScript, or a native frame such as the garbage collector or a `writev` system call), as
 * shares of the time the thread was busy (idle time left out). `JSON.parse` and `JSON.stringify` do
 * not appear on their own: V8 counts them as self time of their caller.
 *
 * Run: `npx tsx bench/profile/summarise-profile.ts <file.cpuprofile>… [top=25] [--requests=N |
 * --results=<results.json>]`; with the number of requests the profiled process answered (given, or
 * taken from the results of the proxy run that wrote the profile), each line also shows the time per
 * request.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../harness/paths.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `src/translate/translate-request.ts` for a file URL inside the repository; the URL otherwise. */
function shortName(url: string): string {
  if (url === '') return '(native)';
  if (url.startsWith('wasm:')) return '(wasm)';
  try {
    const path = url.startsWith('file:') ? fileURLToPath(url) : url;
    if (path.startsWith(REPO_ROOT)) return relative(REPO_ROOT, path);
    // The benchmark's children run from a throw-away build that mirrors the repository (harness/build.ts).
    const inBuild = /\/tpx-bench-build-[^/]+\/(.*)$/.exec(path);
    if (inBuild !== null) return inBuild[1]!.replace(/\.js$/, '.ts');
    return path;
  } catch {
    return url;
  }
}

const args = process.argv.slice(2);
const paths = args.filter((arg) => arg.endsWith('.cpuprofile'));
const top = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 25);
const option = (name: string) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);

/**
 * The requests the profiled process answered, for µs per request: `--requests=N`, or with
 * `--results=<results.json>` of the same proxy run, the sum of `totalRequests` over the rows of the
 * relay the profile's file name names (`tpx-serve.cpuprofile` → provider tpx, via tpx serve).
 */
function requestsFor(path: string): number {
  const given = option('requests');
  if (given !== undefined) return Number(given);
  const resultsPath = option('results');
  const relay = /(tpx|anthropic)-(serve|pass-through)\.cpuprofile$/.exec(path);
  if (resultsPath === undefined || relay === null) return Number.NaN;
  const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as {
    proxy?: { rows: { provider: string; via: string; totalRequests: number }[] };
  };
  const via = relay[2] === 'serve' ? 'tpx serve' : 'pass-through';
  return (results.proxy?.rows ?? [])
    .filter((row) => row.provider === relay[1] && row.via === via)
    .reduce((sum, row) => sum + row.totalRequests, 0);
}
if (paths.length === 0) throw new Error('usage: summarise-profile.ts <file.cpuprofile>… [top]');

/**
 * The area a frame belongs to: a layer of this library (`src/server`), a package (`undici`), Node's own
 * JavaScript (`node internals`), or for native frames the frame itself (`(garbage collector)`, `writev`).
 */
function areaOf(file: string, functionName: string): string {
  if (file === '(native)') return `native: ${functionName || '(anonymous)'}`;
  if (file === '(wasm)') return "wasm (undici's HTTP parser, llhttp)";
  if (file.startsWith('node:')) return 'node internals (JavaScript)';
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (inPackage !== null) return `package: ${inPackage[1]}`;
  const inRepo = /^(src|bench|test)\/([^/]+)\//.exec(file);
  return inRepo === null ? file : `${inRepo[1]}/${inRepo[2]}`;
}

/** Native frames that are not work: the process waiting, or the profiler's own bookkeeping. */
const NOT_WORK = new Set(['(idle)']);

function print(title: string, entries: Map<string, number>, busyUs: number, requests: number): void {
  process.stdout.write(`\n${title} (share of ${(busyUs / 1000).toFixed(0)} ms busy)\n`);
  for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const share = ((100 * us) / busyUs).toFixed(1).padStart(5);
    const perRequest = Number.isFinite(requests) ? `${(us / requests).toFixed(1).padStart(7)} µs/req  ` : '';
    process.stdout.write(`${share}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${perRequest}${name}\n`);
  }
}

// `node --cpu-prof` writes one profile per thread (tsx's loader thread too): each is summarised alone.
for (const path of paths) {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfByFunction = new Map<string, number>();
  const selfByArea = new Map<string, number>();
  let totalUs = 0;
  let busyUs = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    const node = byId.get(id);
    if (node === undefined) return;
    totalUs += delta;
    const { functionName, url } = node.callFrame;
    if (url === '' && NOT_WORK.has(functionName)) return;
    busyUs += delta;
    const file = shortName(url);
    const name = `${file}:${functionName || '(anonymous)'}`;
    selfByFunction.set(name, (selfByFunction.get(name) ?? 0) + delta);
    const area = areaOf(file, functionName);
    selfByArea.set(area, (selfByArea.get(area) ?? 0) + delta);
  });
  process.stdout.write(
    `\n== ${path}: ${(totalUs / 1000).toFixed(0)} ms sampled, ${(busyUs / 1000).toFixed(0)} ms busy\n`,
  );
  const requests = requestsFor(path);
  print('Self time by function', selfByFunction, busyUs, requests);
  print('Self time by area', selfByArea, busyUs, requests);
}
