/**
 * The heap half of benchmark 4, run as its own process with `--expose-gc` (the memory suite starts it):
 * one transport (`tpx` provider) against a running `tpx mock-model`, `transport.send` again and again
 * from 16 concurrent loops, then `transport.stream` likewise, with the heap measured after a forced,
 * repeated garbage collection: after the warm-up, after the sends, after the streams. A heap that
 * grows with the number of exchanges is a leak; one that stays put is not.
 *
 * Run: `node --expose-gc --import tsx bench/suites/heap-exchanges.ts <mock url> <sends> <streams>` (the
 * memory suite runs the built copy, see `harness/build.ts`);
 * prints one JSON line with the results.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { createTransport } from '../../src/transport/create-transport.js';
import type { MessagesRequest } from '../../src/protocol/messages.js';
import { shortPrompt } from '../inputs/conversations.js';

export interface HeapPhase {
  exchanges: number;
  seconds: number;
  /** Heap in use after the phase, after garbage collection. */
  heapUsedBytes: number;
}

export interface HeapReport {
  warmup: HeapPhase;
  sends: HeapPhase;
  streams: HeapPhase;
}

const CONCURRENCY = 16;
const collect = globalThis.gc;

async function collectedHeap(): Promise<number> {
  if (collect === undefined) throw new Error('run with node --expose-gc');
  // Several passes, with turns of the event loop in between, so that finalisers and weak references
  // settle before the heap is read.
  for (let pass = 0; pass < 4; pass++) {
    collect();
    await setImmediate();
  }
  return process.memoryUsage().heapUsed;
}

/** A short prompt with two tools: the mock calls both, so every send exercises the tool-id codec too. */
function requestWithTools(): MessagesRequest {
  return {
    ...shortPrompt(),
    tools: [
      {
        name: 'read_file',
        description: 'Read a file',
        input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
      {
        name: 'run_tests',
        description: 'Run the tests',
        input_schema: { type: 'object', properties: { filter: { type: 'string' } } },
      },
    ],
  };
}

async function main(): Promise<void> {
  const [mockUrl, sendsText, streamsText] = process.argv.slice(2);
  if (mockUrl === undefined) throw new Error('usage: heap-exchanges.ts <mock url> <sends> <streams>');
  const sends = Number(sendsText ?? 100_000);
  const streams = Number(streamsText ?? 10_000);
  const transport = createTransport({ env: { TPX_OAUTH_TOKEN: 'bench-token', TPX_BASE_URL: mockUrl } });
  const request = requestWithTools();
  const streamRequest = { ...request, stream: true };

  async function phase(count: number, exchange: () => Promise<void>): Promise<HeapPhase> {
    let next = 0;
    const startedAt = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) {
          next++;
          await exchange();
        }
      }),
    );
    const seconds = (performance.now() - startedAt) / 1000;
    return { exchanges: count, seconds, heapUsedBytes: await collectedHeap() };
  }

  const send = async () => {
    const message = await transport.send(request);
    if (message.content.length === 0) throw new Error('empty message');
  };
  const stream = async () => {
    let events = 0;
    for await (const _event of transport.stream(streamRequest)) events++;
    if (events === 0) throw new Error('empty stream');
  };
  const warmupCount = Math.max(200, Math.round(sends / 20));
  await phase(warmupCount, send);
  const warmup = await phase(Math.max(100, Math.round(streams / 10)), stream);
  const sendPhase = await phase(sends, send);
  const streamPhase = await phase(streams, stream);
  await transport.close();
  const report: HeapReport = { warmup, sends: sendPhase, streams: streamPhase };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
