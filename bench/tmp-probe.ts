import { chunkStream } from './inputs/chunk-streams.js';
import { translate } from './suites/stream.js';
import { timeInRounds, medianOf, pairedRatio } from './harness/rounds.js';
import { StreamTranslator } from '../src/translate/translate-stream.js';
const toolNames = { fromUpstream: (n: string) => n };
function pushOnly(stream: any) {
  let next = 0;
  const t = new StreamTranslator({ requestModel: 'm', toolNames, generateId: () => `b${++next}` });
  let b = 0;
  for (const e of t.start()) b += JSON.stringify(e).length;
  for (const c of stream.chunks) for (const e of t.push(JSON.parse(c))) b += JSON.stringify(e).length;
  return b;
}
const groups = [];
for (const shape of ['huge-argument', 'text'] as const) {
  const tasks = [];
  for (const n of [1000, 10000, 100000]) {
    const s = chunkStream(shape, n);
    tasks.push({ name: `${shape} full ${n}`, fn: () => translate(s, false) }, { name: `${shape} push ${n}`, fn: () => pushOnly(s) });
  }
  groups.push(tasks);
}
const r = timeInRounds(groups, { rounds: 10, batchMs: 20, warmupMs: 100 });
for (const shape of ['huge-argument', 'text']) for (const kind of ['full', 'push']) {
  console.log(shape, kind, [1000, 10000, 100000].map((n) => (medianOf(r, `${shape} ${kind} ${n}`) * 1e6 / n).toFixed(0) + 'ns/chunk').join(' '),
    pairedRatio(r, `${shape} ${kind} 10000`, `${shape} ${kind} 1000`).toFixed(2), pairedRatio(r, `${shape} ${kind} 100000`, `${shape} ${kind} 10000`).toFixed(2));
}
