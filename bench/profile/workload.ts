/**
 * One benchmark path in a loop, alone, so that `node --cpu-prof` sees nothing else:
 *
 * ```
 * node --cpu-prof --cpu-prof-dir=/tmp/tpx-prof --import tsx bench/profile/workload.ts response-small 10
 * npx tsx bench/profile/summarise-profile.ts /tmp/tpx-prof/*.cpuprofile
 * ```
 *
 * Workloads: `request-<size>`, `response-<size>` (size: small, medium, large), and
 * `stream-<shape>` (shape: text, huge-argument, parallel-calls; 10k deltas). The second argument is
 * the number of seconds to loop (default 10).
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { translateRequest } from '../../src/translate/translate-request.js';
import { chunkStream, STREAM_SHAPES, type StreamShape } from '../inputs/chunk-streams.js';
import { completion } from '../inputs/completions.js';
import { CONVERSATION_SIZES, conversation, type ConversationSize } from '../inputs/conversations.js';
import { translate } from '../suites/stream.js';
import { requestPath, responsePath } from '../suites/translation.js';

const [name, secondsText] = process.argv.slice(2);
const seconds = Number(secondsText ?? 10);
const [kind, ...rest] = (name ?? '').split('-');
const variant = rest.join('-');

function pick(): () => unknown {
  if (kind === 'request' && CONVERSATION_SIZES.includes(variant as ConversationSize)) {
    const bytes = JSON.stringify(conversation(variant as ConversationSize));
    return () => requestPath(bytes);
  }
  if (kind === 'response' && CONVERSATION_SIZES.includes(variant as ConversationSize)) {
    const size = variant as ConversationSize;
    const bytes = JSON.stringify(completion(size));
    const request = conversation(size);
    const { toolNames } = translateRequest(request, { model: request.model });
    return () => responsePath(bytes, toolNames);
  }
  if (kind === 'stream' && STREAM_SHAPES.includes(variant as StreamShape)) {
    const stream = chunkStream(variant as StreamShape, 10_000);
    return () => translate(stream, true);
  }
  throw new Error(`unknown workload "${name ?? ''}": request-<size>, response-<size>, stream-<shape>`);
}

const work = pick();
const endAt = performance.now() + seconds * 1000;
let calls = 0;
let sink: unknown;
while (performance.now() < endAt) {
  sink = work();
  calls++;
}
process.stdout.write(
  `${name}: ${calls} calls in ${seconds} s (${((seconds * 1e6) / calls).toFixed(1)} µs per call)${sink === undefined ? '' : ''}\n`,
);
