/**
 * Pings on silent streams, over loopback: while the upstream says nothing, the proxy writes
 * `event: ping` frames, before the first event (then the headers go out early) and between events; the
 * official SDK ignores them; a failure after an early start is an `event: error` frame; with pings off
 * nothing extra is written.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { PING_FRAME } from '../../src/server/keep-alive.js';
import { startTpxProxy, type TpxProxy } from './serve-support.js';

const proxies: TpxProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

async function proxy(
  pingIntervalMs: number,
  reply: Record<string, unknown>,
  transport: Record<string, unknown> = {},
): Promise<TpxProxy> {
  const started = await startTpxProxy({
    mock: { script: { replies: [{ text: 'warm-up' }, reply as never] } },
    serve: { pingIntervalMs },
    transport,
  });
  proxies.push(started);
  // The first exchange of a process loads the token counter, which holds the event loop for a while (no
  // timer fires then, pings included): the exchanges under test come after it.
  await rawStream(started.server.url);
  return started;
}

/** Streams one request and returns the raw SSE text with the time each frame arrived. */
async function rawStream(url: string): Promise<{ status: number; frames: { text: string; atMs: number }[] }> {
  const startedMs = Date.now();
  const response = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'claude-test',
      max_tokens: 32,
      stream: true,
      messages: [{ role: 'user', content: 'Hello' }],
    }),
  });
  const frames: { text: string; atMs: number }[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body!) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      frames.push({ text: buffer.slice(0, end + 2), atMs: Date.now() - startedMs });
      buffer = buffer.slice(end + 2);
    }
  }
  return { status: response.status, frames };
}

describe('pings while the upstream is silent', () => {
  it('starts the stream with a ping when the first event is late, and keeps pinging until it comes', async () => {
    const server = await proxy(150, { text: 'Hi there', delay_ms: 900 });
    const { status, frames } = await rawStream(server.server.url);
    expect(status).toBe(200);
    const firstEvent = frames.findIndex((frame) => frame.text.startsWith('event: message_start'));
    const pings = frames.slice(0, firstEvent).filter((frame) => frame.text === PING_FRAME);
    // 900 ms of silence at a 150 ms interval: a ping at the start, then one at least every 300 ms.
    expect(pings.length).toBeGreaterThanOrEqual(3);
    expect(pings.length).toBe(firstEvent);
    expect(frames.at(-1)!.text).toContain('message_stop');
  });

  it('pings between events while the upstream pauses mid-stream', async () => {
    const server = await proxy(100, { text: 'one two', chunk_delay_ms: 350 });
    const { frames } = await rawStream(server.server.url);
    const firstEvent = frames.findIndex((frame) => frame.text.startsWith('event: message_start'));
    const laterPings = frames.slice(firstEvent + 1).filter((frame) => frame.text === PING_FRAME);
    expect(laterPings.length).toBeGreaterThanOrEqual(2);
    expect(frames.at(-1)!.text).toContain('message_stop');
  });

  it('delivers the same message to the official SDK, which ignores the pings', async () => {
    const server = await proxy(100, { text: 'Hello from a slow model', delay_ms: 500 });
    const client = new Anthropic({ baseURL: server.server.url, apiKey: 'unused', maxRetries: 0 });
    const message = await client.messages
      .stream({ model: 'claude-test', max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] })
      .finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from a slow model' }]);
  });

  it('ends an early-started stream with an error frame when the upstream then fails', async () => {
    const server = await proxy(
      100,
      {
        error: { status: 500, body: { error: { message: 'model crashed', type: 'server_error' } } },
        delay_ms: 400,
      },
      { maxRetries: 0 },
    );
    const { status, frames } = await rawStream(server.server.url);
    expect(status).toBe(200);
    expect(frames[0]!.text).toBe(PING_FRAME);
    expect(frames.at(-1)!.text).toMatch(/^event: error\n/);
    expect(frames.at(-1)!.text).toContain('api_error');
  });

  it('writes no pings when they are off, and fails a late stream with its HTTP status', async () => {
    const quiet = await proxy(0, { text: 'Hi there', delay_ms: 400 });
    const { frames } = await rawStream(quiet.server.url);
    expect(frames.some((frame) => frame.text === PING_FRAME)).toBe(false);
    const failing = await proxy(
      0,
      {
        error: { status: 500, body: { error: { message: 'model crashed', type: 'server_error' } } },
        delay_ms: 300,
      },
      {
        maxRetries: 0,
      },
    );
    const { status } = await rawStream(failing.server.url);
    expect(status).toBe(500);
  });
});
