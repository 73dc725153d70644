/**
 * Backpressure over real HTTP: a consumer that stops reading a stream stops the upstream too (the
 * transport buffers a bounded amount, then the connection is paused), and every byte still arrives once
 * it reads again.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport } from '../../src/transport/types.js';

/** One text delta of about 1 KiB, repeated: the upstream sends `DELTAS` of them as fast as it may. */
const DELTA_TEXT = 'x'.repeat(1_000);
const DELTAS = 40_000;
const FRAME = `data: ${JSON.stringify({
  id: 'chatcmpl-bp',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta: { content: DELTA_TEXT }, finish_reason: null }],
})}\n\n`;
const TOTAL_BYTES = Buffer.byteLength(FRAME) * DELTAS;

interface Upstream {
  url: string;
  /** Bytes the upstream's socket accepted so far (written, or buffered by the kernel). */
  accepted(): number;
  finished: Promise<void>;
  close(): Promise<void>;
}

async function startFloodingUpstream(): Promise<Upstream> {
  let accepted = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const flood = async (response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const first = {
      id: 'chatcmpl-bp',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    };
    response.write(`data: ${JSON.stringify(first)}\n\n`);
    for (let sent = 0; sent < DELTAS; sent++) {
      const flowing = response.write(FRAME);
      accepted += FRAME.length;
      if (!flowing) await once(response, 'drain');
    }
    const last = { ...first, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
    response.end(`data: ${JSON.stringify(last)}\n\ndata: [DONE]\n\n`);
    finish();
  };
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => void flood(response));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    accepted: () => accepted,
    finished,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let upstream: Upstream | undefined;
let transport: ModelTransport | undefined;

afterEach(async () => {
  await transport?.close();
  await upstream?.close();
});

describe('backpressure', () => {
  it('pauses the upstream while the consumer does not read, and delivers every delta once it does', async () => {
    upstream = await startFloodingUpstream();
    transport = createTransport({ env: {}, tpxToken: 'bp-token', tpxBaseUrl: upstream.url, maxRetries: 0 });
    const stream = transport.stream({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'flood' }],
    });
    const events = stream[Symbol.asyncIterator]();
    // The first event arrives, then the consumer stops reading for a while.
    expect((await events.next()).value).toMatchObject({ type: 'message_start' });
    await new Promise((resolve) => setTimeout(resolve, 400));
    const acceptedWhilePaused = upstream.accepted();
    // Socket buffers on both sides hold a few MiB at most; without backpressure the whole 40 MB would be
    // accepted (and held in the transport's memory) in that time.
    expect(acceptedWhilePaused).toBeLessThan(TOTAL_BYTES / 4);

    let text = 0;
    let last: { type: string } | undefined;
    for (;;) {
      const next = await events.next();
      if (next.done === true) break;
      const event = next.value;
      last = event;
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
        text += event.delta.text.length;
      }
    }
    await upstream.finished;
    expect(text).toBe(DELTA_TEXT.length * DELTAS);
    expect(last).toEqual({ type: 'message_stop' });
  }, 60_000);
});
