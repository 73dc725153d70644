/**
 * Benchmark 2: stream translation, and how its cost grows with the stream.
 *
 * For each shape (text deltas; one huge tool argument in fragments; 16 parallel tool calls interleaved)
 * and each size (1k, 10k, 100k deltas), one operation is a whole stream:
 *
 * - translation: `JSON.parse` each chunk → `StreamTranslator.push` → `JSON.stringify` each event it
 *   returns (plus `start()` and `finish()`);
 * - floor: `JSON.parse` each chunk + `JSON.stringify` of one prebuilt event of the same size per chunk.
 *
 * Reported: time per chunk of both and their ratio (target: ≤ 1.5×), and the scaling of the
 * translation, time(10k)/time(1k) and time(100k)/time(10k): a linear translator stays near 10×
 * (target: ≤ 11×); a quadratic one approaches 100×. One informational row per shape at the middle size
 * adds `validateChatCompletionChunk`, which the `tpx` provider runs on every chunk.
 *
 * @module
 */
import { validateChatCompletionChunk } from '../../src/protocol/validate-chat-completions.js';
import { createStreamGrammar } from '../../src/protocol/stream-grammar.js';
import { validateStreamEvent } from '../../src/protocol/validate-messages.js';
import { StreamTranslator } from '../../src/translate/stream-translator.js';
import type { ChatCompletionChunk } from '../../src/protocol/chat-completions.js';
import { medianOf, pairedRatio, timeInRounds, type RoundOptions, type TimedTask } from '../harness/rounds.js';
import { formatBytes, formatDuration, formatRatio, formatSpread, round, verdict } from '../harness/stats.js';
import type { Table } from '../harness/table.js';
import { STREAM_SHAPES, chunkStream, type ChunkStream, type StreamShape } from '../inputs/chunk-streams.js';

/** The target: ten times the deltas take at most this many times the time. */
export const SCALING_TARGET = 11;
/** Translation time per chunk over the floor's, at every size and shape. */
export const CHUNK_TARGET = 1.5;

export interface StreamRow {
  shape: StreamShape;
  deltas: number;
  chunks: number;
  bytes: number;
  floorMsPerStream: number;
  translationMsPerStream: number;
  floorNsPerChunk: number;
  translationNsPerChunk: number;
  ratio: number;
  /** Translation with per-chunk validation, ns per chunk (middle size only). */
  validatedNsPerChunk?: number;
}

export interface ScalingRow {
  shape: StreamShape;
  from: number;
  to: number;
  /** time(to) / time(from), whole streams, translation path: median of the per-round ratios. */
  translationScaling: number;
  /** Quartiles of the per-round ratios. */
  translationScalingP25: number;
  translationScalingP75: number;
  /** The same ratio for the floor: how much of the growth the machine itself adds. */
  floorScaling: number;
  target: number;
  met: boolean;
}

export interface StreamResult {
  sizes: number[];
  rows: StreamRow[];
  scaling: ScalingRow[];
  tables: Table[];
}

const toolNames = { fromUpstream: (name: string) => name };

/** The stream path over one whole stream; returns the bytes of the events, so nothing is optimised away. */
export function translate(stream: ChunkStream, validate: boolean): number {
  let next = 0;
  const translator = new StreamTranslator({
    requestModel: 'claude-sonnet-4-5',
    toolNames,
    generateId: () => `bench${++next}`,
  });
  let bytes = 0;
  for (const event of translator.start()) bytes += JSON.stringify(event).length;
  for (const text of stream.chunks) {
    let chunk = JSON.parse(text) as ChatCompletionChunk;
    if (validate) {
      const validated = validateChatCompletionChunk(chunk);
      if (!validated.ok) throw new Error(`benchmark chunk is invalid: ${validated.message}`);
      chunk = validated.value;
    }
    for (const event of translator.push(chunk)) bytes += JSON.stringify(event).length;
  }
  for (const event of translator.finish(true)) bytes += JSON.stringify(event).length;
  return bytes;
}

function floor(stream: ChunkStream): number {
  let bytes = 0;
  const { chunks, floorEvents } = stream;
  for (let index = 0; index < chunks.length; index++) {
    const chunk: unknown = JSON.parse(chunks[index]!);
    bytes += JSON.stringify(floorEvents[index]).length + (chunk === null ? 1 : 0);
  }
  return bytes;
}

/** Translates the stream once more and checks the events form a valid Messages stream. */
function checkStream(stream: ChunkStream): void {
  let next = 0;
  const translator = new StreamTranslator({
    requestModel: 'claude-sonnet-4-5',
    toolNames,
    generateId: () => `bench${++next}`,
  });
  const events = [...translator.start()];
  for (const text of stream.chunks) events.push(...translator.push(JSON.parse(text) as ChatCompletionChunk));
  events.push(...translator.finish(true));
  const grammar = createStreamGrammar();
  for (const event of events) {
    const validated = validateStreamEvent(event);
    if (!validated.ok) throw new Error(`${stream.shape}: invalid event: ${validated.message}`);
    const violation = grammar.accept(event);
    if (violation !== undefined) throw new Error(`${stream.shape}: ${violation}`);
  }
  const ending = grammar.end();
  if (ending !== undefined) throw new Error(`${stream.shape}: ${ending}`);
  const expectedBlocks = stream.shape === 'parallel-calls' ? Math.min(16, stream.deltas) : 1;
  const blocks = events.filter((event) => event.type === 'content_block_start').length;
  if (blocks !== expectedBlocks)
    throw new Error(`${stream.shape}: ${blocks} blocks, expected ${expectedBlocks}`);
}

/** Runs benchmark 2 over `sizes` (three sizes, each ten times the one before). */
export function runStream(sizes: readonly number[], options: RoundOptions): StreamResult {
  const streams = new Map<string, ChunkStream>();
  const groups: TimedTask[][] = [];
  const middle = sizes[Math.floor(sizes.length / 2)]!;
  for (const shape of STREAM_SHAPES) {
    const tasks: TimedTask[] = [];
    groups.push(tasks);
    for (const deltas of sizes) {
      const stream = chunkStream(shape, deltas);
      checkStream(stream);
      streams.set(`${shape} ${deltas}`, stream);
      tasks.push(
        { name: `floor ${shape} ${deltas}`, fn: () => floor(stream) },
        { name: `translation ${shape} ${deltas}`, fn: () => translate(stream, false) },
      );
      if (deltas === middle) {
        tasks.push({ name: `validated ${shape} ${deltas}`, fn: () => translate(stream, true) });
      }
    }
  }
  const samples = timeInRounds(groups, options);

  const rows: StreamRow[] = [];
  const scaling: ScalingRow[] = [];
  for (const shape of STREAM_SHAPES) {
    for (const deltas of sizes) {
      const stream = streams.get(`${shape} ${deltas}`)!;
      const floorMs = medianOf(samples, `floor ${shape} ${deltas}`);
      const translationMs = medianOf(samples, `translation ${shape} ${deltas}`);
      const row: StreamRow = {
        shape,
        deltas,
        chunks: stream.chunks.length,
        bytes: stream.bytes,
        floorMsPerStream: round(floorMs),
        translationMsPerStream: round(translationMs),
        floorNsPerChunk: round((floorMs * 1e6) / stream.chunks.length),
        translationNsPerChunk: round((translationMs * 1e6) / stream.chunks.length),
        ratio: round(
          pairedRatio(samples, `translation ${shape} ${deltas}`, `floor ${shape} ${deltas}`).median,
          3,
        ),
      };
      if (deltas === middle) {
        row.validatedNsPerChunk = round(
          (medianOf(samples, `validated ${shape} ${deltas}`) * 1e6) / stream.chunks.length,
        );
      }
      rows.push(row);
    }
    for (let index = 1; index < sizes.length; index++) {
      const from = sizes[index - 1]!;
      const to = sizes[index]!;
      const translationScaling = pairedRatio(
        samples,
        `translation ${shape} ${to}`,
        `translation ${shape} ${from}`,
      );
      const floorScaling = pairedRatio(samples, `floor ${shape} ${to}`, `floor ${shape} ${from}`).median;
      // The target is stated for 10× the deltas; scale it if the sizes step differently.
      const target = (SCALING_TARGET * to) / (10 * from);
      scaling.push({
        shape,
        from,
        to,
        translationScaling: round(translationScaling.median, 3),
        translationScalingP25: round(translationScaling.p25, 3),
        translationScalingP75: round(translationScaling.p75, 3),
        floorScaling: round(floorScaling, 3),
        target: round(target, 3),
        met: translationScaling.median <= target,
      });
    }
  }

  const label = (deltas: number) => (deltas >= 1000 ? `${deltas / 1000}k` : String(deltas));
  const scalingTable: Table = {
    title: 'Stream translation scaling (10× the deltas should take ≤ 11× the time)',
    header: ['shape', 'step', 'translation time ratio (IQR)', 'floor time ratio', 'target', 'verdict'],
    rows: scaling.map((row) => [
      row.shape,
      `${label(row.from)} → ${label(row.to)}`,
      formatSpread({
        median: row.translationScaling,
        p25: row.translationScalingP25,
        p75: row.translationScalingP75,
      }),
      formatRatio(row.floorScaling),
      `≤ ${row.target}×`,
      verdict(row.translationScaling, { max: row.target }),
    ]),
    notes: [
      'Whole-stream time of the larger stream over the smaller one: median of the per-round ratios, with their',
      'interquartile range. The floor ratio is the same measure for the floor: growth the machine itself adds.',
    ],
  };
  const perChunkTable: Table = {
    title: 'Stream translation per chunk vs the floor (parse each chunk + stringify one event)',
    header: [
      'shape',
      'deltas',
      'stream',
      'floor / chunk',
      'translation / chunk',
      'ratio',
      `+ validate / chunk`,
    ],
    rows: rows.map((row) => [
      row.shape,
      label(row.deltas),
      formatBytes(row.bytes),
      formatDuration(row.floorNsPerChunk / 1e6),
      formatDuration(row.translationNsPerChunk / 1e6),
      formatRatio(row.ratio),
      row.validatedNsPerChunk === undefined ? '' : formatDuration(row.validatedNsPerChunk / 1e6),
    ]),
    notes: [
      'Medians of whole-stream times divided by the chunk count (deltas + role, finish and usage chunks).',
      'The last column adds validateChatCompletionChunk per chunk, as the tpx provider does (middle size).',
    ],
  };
  return { sizes: [...sizes], rows, scaling, tables: [scalingTable, perChunkTable] };
}
