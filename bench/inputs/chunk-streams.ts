/**
 * Chat Completions streams as the serialised `data:` payloads of their chunks, in three shapes, with
 * the number of content deltas as the size:
 *
 * - `text`: one word of text per delta;
 * - `huge-argument`: one tool call whose JSON arguments (one long string field) arrive in 8-character
 *   fragments, one per delta, after a header delta with the call's id and name;
 * - `parallel-calls`: 16 tool calls whose headers, then fragments, arrive interleaved round-robin.
 *
 * Each stream opens with a role chunk and closes with a finish chunk and a usage chunk (what a server
 * sends with `stream_options.include_usage`), as `tpx mock-model` and OpenAI do.
 *
 * The content deltas cycle through a fixed pool of 1,024 distinct chunk strings, so a 100k-delta stream
 * holds references, not 25 MB of fresh text. That keeps the input the same size in memory (and in the
 * CPU caches) whatever the stream length, so the scaling ratios measure the translator's own growth and
 * not the machine's cache hierarchy: with a fully materialised stream, even the bare `JSON.parse` floor
 * costs up to 3× more per chunk at 100k deltas than at 1k on our 2-core CI machines. A real proxy parses
 * each chunk as it arrives, while it is still in cache, which the pool resembles.
 *
 * Next to every chunk is the Messages event a minimal translation would emit for it, used by the floor
 * of the stream benchmark.
 *
 * @module
 */
import { idOf, seededRandom, words } from './random.js';

export type StreamShape = 'text' | 'huge-argument' | 'parallel-calls';

export const STREAM_SHAPES: readonly StreamShape[] = ['text', 'huge-argument', 'parallel-calls'];

/** One stream: its chunks' JSON text, and for the floor one Messages event per chunk. */
export interface ChunkStream {
  shape: StreamShape;
  deltas: number;
  chunks: string[];
  /** `floorEvents[i]` is a Messages event the size of what chunk `i` becomes, prebuilt. */
  floorEvents: Record<string, unknown>[];
  /** Total bytes of the chunks, as they would arrive on the wire (without SSE framing). */
  bytes: number;
}

const POOL_SIZE = 1024;
const PARALLEL_CALLS = 16;
const FRAGMENT_LENGTH = 8;

type Event = Record<string, unknown>;

/** The serialised chunk for one delta, and the event the floor stringifies for it. */
interface Piece {
  chunk: string;
  event: Event;
}

/** Builds one stream from its distinct pieces: `head`, then `deltas` pieces cycling `pool`, then `tail`. */
function assemble(
  shape: StreamShape,
  deltas: number,
  head: Piece[],
  pool: Piece[][],
  tail: Piece[],
): ChunkStream {
  const chunks: string[] = [];
  const floorEvents: Event[] = [];
  const add = (piece: Piece) => {
    chunks.push(piece.chunk);
    floorEvents.push(piece.event);
  };
  head.forEach(add);
  // `pool[lane]` is the cycle of one lane (one tool call; the text shape has a single lane); lanes take
  // turns, round-robin, as interleaved parallel calls do.
  const cursors = new Array<number>(pool.length).fill(0);
  for (let count = head.length - 1; count < deltas; count++) {
    const lane = count % pool.length;
    const cycle = pool[lane]!;
    add(cycle[cursors[lane]! % cycle.length]!);
    cursors[lane]!++;
  }
  tail.forEach(add);
  let bytes = 0;
  for (const chunk of chunks) bytes += chunk.length;
  return { shape, deltas, chunks, floorEvents, bytes };
}

/** The stream of `shape` with `deltas` content deltas (at least 16 for `parallel-calls`). */
export function chunkStream(shape: StreamShape, deltas: number): ChunkStream {
  const random = seededRandom(1_000 + shape.length);
  const envelope = {
    id: `chatcmpl-${idOf(random, 24)}`,
    object: 'chat.completion.chunk',
    created: 1_767_225_600,
    model: 'bench',
  };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    JSON.stringify({
      ...envelope,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      usage: null,
    });
  const textPiece = (text: string): Piece => ({
    chunk: chunk({ content: text }),
    event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
  });
  const header = (call: number): Piece => ({
    chunk: chunk({
      tool_calls: [
        {
          index: call,
          id: `call_${idOf(random, 24)}`,
          type: 'function',
          function: { name: `tool_${call}`, arguments: '' },
        },
      ],
    }),
    event: {
      type: 'content_block_start',
      index: call,
      content_block: { type: 'tool_use', id: `toolu_${idOf(random, 24)}`, name: `tool_${call}`, input: {} },
    },
  });
  const fragment = (call: number, text: string): Piece => ({
    chunk: chunk({ tool_calls: [{ index: call, function: { arguments: text } }] }),
    event: {
      type: 'content_block_delta',
      index: call,
      delta: { type: 'input_json_delta', partial_json: text },
    },
  });
  /** Fragments of one long JSON string value: plain words, so any sequence of them stays valid JSON. */
  const fragments = (call: number, count: number): Piece[] =>
    Array.from({ length: count }, () =>
      fragment(call, words(random, FRAGMENT_LENGTH).padEnd(FRAGMENT_LENGTH, ' ')),
    );

  const head: Piece[] = [{ chunk: chunk({ role: 'assistant', content: '' }), event: textPiece('').event }];
  let pool: Piece[][];
  let closers: Piece[] = [];
  switch (shape) {
    case 'text':
      pool = [
        Array.from({ length: POOL_SIZE }, () => textPiece(` ${words(random, 3 + Math.floor(random() * 6))}`)),
      ];
      break;
    case 'huge-argument':
      head.push(header(0), fragment(0, '{"path":"src/main.ts","content":"'));
      pool = [fragments(0, POOL_SIZE)];
      closers = [fragment(0, '"}')];
      break;
    case 'parallel-calls':
      if (deltas < PARALLEL_CALLS * 3)
        throw new Error(`parallel-calls needs at least ${PARALLEL_CALLS * 3} deltas`);
      for (let call = 0; call < PARALLEL_CALLS; call++) head.push(header(call));
      for (let call = 0; call < PARALLEL_CALLS; call++) head.push(fragment(call, '{"content":"'));
      pool = Array.from({ length: PARALLEL_CALLS }, (_, call) => fragments(call, POOL_SIZE / PARALLEL_CALLS));
      closers = Array.from({ length: PARALLEL_CALLS }, (_, call) => fragment(call, '"}'));
      break;
    default: {
      const unknown: never = shape;
      throw new Error(`unknown stream shape ${String(unknown)}`);
    }
  }
  // The closing fragments count as deltas too: take them out of the cycled part.
  const cycled = deltas - closers.length;
  const tail: Piece[] = [
    ...closers,
    {
      chunk: chunk({}, shape === 'text' ? 'stop' : 'tool_calls'),
      event: {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: deltas },
      },
    },
    {
      chunk: JSON.stringify({
        ...envelope,
        choices: [],
        usage: { prompt_tokens: 1200, completion_tokens: deltas, total_tokens: 1200 + deltas },
      }),
      event: { type: 'message_stop' },
    },
  ];
  return assemble(shape, cycled, head, pool, tail);
}
