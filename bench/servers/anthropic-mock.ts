/**
 * A scripted Anthropic-compatible server for the native-path benchmarks: `POST /v1/messages` answers at
 * once with a plain text message, as JSON or as a Messages event stream (`event:` lines, one
 * `content_block_delta` per word, a `ping` after the block opens, as Anthropic sends them). The text
 * echoes the start of the last user message, the way `tpx mock-model` does, so both providers carry
 * about the same content back. `GET /v1/models` lists one model; anything else is a 404.
 *
 * Run: `tsx bench/servers/anthropic-mock.ts [--chunk-delay-ms N] [--instant-first N]`; prints
 * `anthropic-mock listening on <url>`. With a chunk delay, the first `--instant-first` requests are
 * still answered at once (warm-up), and every later stream waits that long between events (the
 * memory benchmark keeps a thousand streams open that way).
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { 'chunk-delay-ms': { type: 'string' }, 'instant-first': { type: 'string' } },
});
const chunkDelayMs = Number(values['chunk-delay-ms'] ?? 0);
const instantFirst = Number(values['instant-first'] ?? 0);
let served = 0;
let messageCount = 0;

function lastUserText(body: unknown): string {
  const messages = (body as { messages?: { role?: unknown; content?: unknown }[] } | null)?.messages ?? [];
  const last = [...messages].reverse().find((message) => message.role === 'user');
  const content = last?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: { text?: unknown }) => (typeof block.text === 'string' ? block.text : ''))
    .join(' ');
}

function frame(event: Record<string, unknown> & { type: string }): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
  const url = request.url ?? '/';
  if (request.method === 'GET' && url.startsWith('/v1/models')) {
    const body = JSON.stringify({
      data: [{ type: 'model', id: 'claude-sonnet-4-5', display_name: 'Bench' }],
      has_more: false,
    });
    response.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    response.end(body);
    return;
  }
  if (request.method !== 'POST' || !url.startsWith('/v1/messages')) {
    const body = JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'Not found' } });
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(body);
    return;
  }
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string; stream?: boolean };
  const echoed = lastUserText(body).replace(/\s+/g, ' ').trim().slice(0, 119);
  const text = `You said: ${echoed}…`;
  const id = `msg_bench${String(++messageCount).padStart(8, '0')}`;
  const requestId = `req_bench${String(messageCount).padStart(8, '0')}`;
  const usage = { input_tokens: 60, output_tokens: Math.ceil(text.length / 4) };
  const model = body.model ?? 'claude-sonnet-4-5';
  if (body.stream !== true) {
    const message = JSON.stringify({
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage,
    });
    response.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(message),
      'request-id': requestId,
    });
    response.end(message);
    return;
  }
  const delayMs = ++served > instantFirst ? chunkDelayMs : 0;
  const frames = [
    frame({
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }),
    frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    frame({ type: 'ping' }),
    ...(text.match(/\s*\S+/g) ?? []).map((word) =>
      frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } }),
    ),
    frame({ type: 'content_block_stop', index: 0 }),
    frame({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
    frame({ type: 'message_stop' }),
  ];
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': requestId,
  });
  response.flushHeaders();
  let isGone = false;
  response.once('close', () => {
    isGone = !response.writableFinished;
  });
  for (const [index, data] of frames.entries()) {
    if (index > 0 && delayMs > 0) await sleep(delayMs);
    if (isGone) return;
    response.write(data);
  }
  response.end();
}

const server = createServer({ noDelay: true }, (request, response) => {
  answer(request, response).catch(() => {
    if (!response.headersSent) response.writeHead(500).end();
    else response.destroy();
  });
});
server.keepAliveTimeout = 30_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stderr.write(`anthropic-mock listening on http://127.0.0.1:${port}\n`);
});

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
