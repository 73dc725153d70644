/**
 * A collector may answer an export before it has read the whole request (HTTP lets a server answer
 * early; a proxy in front of a collector may). The OTLP transport then reports success while the
 * request's bytes are still being written, and the span batches fill the delivered batch again at
 * once. Whatever the next spans write there must not reach the request still on its way.
 *
 * The collector here is a raw TCP server on loopback: it answers `200` as soon as a request's head
 * has arrived, stops reading, and reads the body only when the test lets it, after the next batch was
 * filled. The body is read back with an independent protobuf reader.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createOtlpSpanExporter } from '../../src/server/otlp-span-exporter.js';
import { newTraceId, RecordedSpan, SPAN_KIND_SERVER } from '../../src/server/recorded-span.js';
import { SpanBatches } from '../../src/server/span-batches.js';
import { decodeTraceRequest } from '../helpers/otlp-protobuf.js';

/** Spans per batch, each padded so that one request (about 40 MB) is more than loopback buffers hold. */
const SPANS_PER_BATCH = 20_000;
const PADDING = 'x'.repeat(2_000);

interface EarlyCollector {
  url: string;
  /** How many requests have been answered (each as soon as its head arrived). */
  readonly answered: number;
  /** Lets the collector read every request body it holds; resolves to them, in arrival order. */
  readAll(): Promise<Buffer[]>;
  close(): Promise<void>;
}

/** How a chunked body ends: its last, empty chunk. */
const LAST_CHUNK = Buffer.from('\r\n0\r\n\r\n', 'latin1');

/** The body of a whole chunked request, from `at` in `received`. */
function dechunk(received: Buffer, at: number): Buffer {
  const parts: Buffer[] = [];
  let offset = at;
  for (;;) {
    const lineEnd = received.indexOf('\r\n', offset);
    const size = Number.parseInt(received.subarray(offset, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) return Buffer.concat(parts);
    parts.push(received.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

async function startEarlyCollector(): Promise<EarlyCollector> {
  const connections: {
    socket: Socket;
    chunks: Buffer[];
    /** Bytes received, and the last few of them. */
    total: number;
    tail: Buffer;
    bodyStart: number;
    length: number;
  }[] = [];
  let answered = 0;
  const server: Server = createServer((socket) => {
    const connection = {
      socket,
      chunks: [] as Buffer[],
      total: 0,
      tail: Buffer.alloc(0),
      bodyStart: -1,
      length: -1,
    };
    connections.push(connection);
    socket.on('data', (chunk: Buffer) => {
      connection.chunks.push(chunk);
      connection.total += chunk.length;
      connection.tail = Buffer.concat([connection.tail, chunk]).subarray(-LAST_CHUNK.length);
      if (connection.bodyStart !== -1) return;
      const received = Buffer.concat(connection.chunks);
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      // Without a length the body is chunked.
      const length = /\r\ncontent-length: *(\d+)/i.exec(received.subarray(0, headEnd).toString('latin1'));
      connection.bodyStart = headEnd + 4;
      connection.length = Number(length?.[1] ?? -1);
      connection.chunks = [received];
      // Answered before the body is read, then nothing more is read until the test says so.
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n');
      socket.pause();
      answered += 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    get answered() {
      return answered;
    },
    readAll: () =>
      Promise.all(
        connections.map(
          (connection) =>
            new Promise<Buffer>((resolve) => {
              const done = () => {
                const isComplete =
                  connection.length === -1
                    ? connection.tail.equals(LAST_CHUNK)
                    : connection.total - connection.bodyStart >= connection.length;
                if (!isComplete) return false;
                const received = Buffer.concat(connection.chunks);
                resolve(
                  connection.length === -1
                    ? dechunk(received, connection.bodyStart)
                    : received.subarray(connection.bodyStart, connection.bodyStart + connection.length),
                );
                return true;
              };
              if (done()) return;
              connection.socket.on('data', () => void done());
              connection.socket.resume();
            }),
        ),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        for (const connection of connections) connection.socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function span(name: string): RecordedSpan {
  const recorded = new RecordedSpan(newTraceId(), undefined, name, SPAN_KIND_SERVER);
  recorded.setAttribute('padding', PADDING);
  recorded.endMs = recorded.startMs + 1;
  return recorded;
}

/** The names of the spans in one decoded export. */
function spanNames(body: Buffer): string[] {
  const request = decodeTraceRequest(body) as {
    resourceSpans: { scopeSpans: { spans: { name: string }[] }[] }[];
  };
  return request.resourceSpans.flatMap((resource) =>
    resource.scopeSpans.flatMap((scope) => scope.spans.map((each) => each.name)),
  );
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('span export to a collector that answers before reading the request', () => {
  it('delivers each batch as it was encoded, although the batch is filled again before its bytes are read', async () => {
    const collector = await startEarlyCollector();
    closers.push(() => collector.close());
    const batches = new SpanBatches(
      {
        scheduleDelayMs: 60_000,
        exportTimeoutMs: 30_000,
        maxQueueSize: 2 * SPANS_PER_BATCH,
        maxExportBatchSize: SPANS_PER_BATCH,
      },
      createOtlpSpanExporter({
        url: collector.url,
        protocol: 'http/protobuf',
        origin: { resourceAttributes: [['service.name', 'early-answer']], scopeName: 'tpx-transport' },
      }),
    );
    closers.push(() => batches.shutdown());
    // Each export is answered (a success) while most of its body is still unread. The batch being
    // filled while one is exported is a new one; the delivered first one is filled again by the third.
    for (const name of ['first', 'second', 'third']) {
      for (let index = 0; index < SPANS_PER_BATCH; index++) batches.add(span(name));
      await batches.flush();
    }
    expect(collector.answered).toBe(3);
    const bodies = await collector.readAll();
    expect(bodies.map((body) => spanNames(body).length)).toStrictEqual([
      SPANS_PER_BATCH,
      SPANS_PER_BATCH,
      SPANS_PER_BATCH,
    ]);
    expect(bodies.map((body) => [...new Set(spanNames(body))])).toStrictEqual([
      ['first'],
      ['second'],
      ['third'],
    ]);
  });
});
