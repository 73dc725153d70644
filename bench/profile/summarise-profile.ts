/**
 * Summarises a V8 CPU profile (`node --cpu-prof` writes `*.cpuprofile`): the functions with the most
 * self time, and the files with the most self time, so a hot spot can be named as `file:function`.
 *
 * Run: `npx tsx bench/profile/summarise-profile.ts <file.cpuprofile>… [top=25]`.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../harness/children.js';

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
  try {
    const path = url.startsWith('file:') ? fileURLToPath(url) : url;
    return path.startsWith(REPO_ROOT) ? relative(REPO_ROOT, path) : path;
  } catch {
    return url;
  }
}

const args = process.argv.slice(2);
const paths = args.filter((arg) => arg.endsWith('.cpuprofile'));
const top = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 25);
if (paths.length === 0) throw new Error('usage: summarise-profile.ts <file.cpuprofile>… [top]');

function print(title: string, entries: Map<string, number>, totalUs: number): void {
  process.stdout.write(`\n${title} (of ${(totalUs / 1000).toFixed(0)} ms sampled)\n`);
  for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const share = ((100 * us) / totalUs).toFixed(1).padStart(5);
    process.stdout.write(`${share}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}\n`);
  }
}

// `node --cpu-prof` writes one profile per thread (tsx's loader thread too): each is summarised alone.
for (const path of paths) {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfByFunction = new Map<string, number>();
  const selfByFile = new Map<string, number>();
  let totalUs = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    const node = byId.get(id);
    if (node === undefined) return;
    totalUs += delta;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = shortName(url);
    const name = `${file}:${functionName || '(anonymous)'}${url === '' ? '' : `:${lineNumber + 1}`}`;
    selfByFunction.set(name, (selfByFunction.get(name) ?? 0) + delta);
    selfByFile.set(file, (selfByFile.get(file) ?? 0) + delta);
  });
  process.stdout.write(`\n== ${path}\n`);
  print('Self time by function', selfByFunction, totalUs);
  print('Self time by file', selfByFile, totalUs);
}
