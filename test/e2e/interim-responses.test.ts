/**
 * Interim `100 Continue` answers (RFC 9110 §15.2) on kept-alive connections, through the library for
 * both providers: every exchange on one connection is preceded by a 100, none breaks the connection,
 * and text that looks like a 100 inside an answer's body is left as it is.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransport, type ModelTransport } from '../../src/index.js';
import { anthropicSse, openAiSse, textMessage, textStreamEvents } from '../helpers/scripted-server.js';

/** An answer text that is itself a 100 head, to show the body is never filtered. */
const TRICKY_TEXT = 'HTTP/1.1 100 Continue\r\n\r\nstill the answer';

let server: Server;
let url: string;
/** How many requests each connection carried. */
const requestsPerSocket = new Map<Socket, number>();

function openAiCompletion(text: string) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
  };
}

beforeAll(async () => {
  server = createServer((request, response) => {
    requestsPerSocket.set(request.socket, (requestsPerSocket.get(request.socket) ?? 0) + 1);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { stream?: boolean };
      // Unasked for: the client sent no `Expect`.
      response.writeContinue();
      const chat = request.url?.includes('chat/completions') === true;
      if (body.stream === true) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const frames = chat
          ? openAiSse([
              { choices: [{ index: 0, delta: { role: 'assistant', content: TRICKY_TEXT } }] },
              { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
            ])
          : anthropicSse(textStreamEvents([TRICKY_TEXT]));
        response.end(frames.join(''));
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(chat ? openAiCompletion(TRICKY_TEXT) : textMessage(TRICKY_TEXT)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const PROVIDERS = [
  { name: 'anthropic', options: () => ({ anthropicApiKey: 'sk-ant-interim', anthropicBaseUrl: url }) },
  { name: 'tpx', options: () => ({ tpxToken: 'tpx-interim', tpxBaseUrl: `${url}/v1` }) },
] as const;

describe.each(PROVIDERS)('$name', ({ options }) => {
  let transport: ModelTransport;
  beforeAll(() => {
    transport = createTransport({ env: {}, maxRetries: 0, ...options() });
  });
  afterAll(async () => {
    await transport.close();
  });

  it('takes the answer after a 100 Continue, exchange after exchange on one kept-alive connection', async () => {
    requestsPerSocket.clear();
    const request = {
      model: 'claude-test',
      max_tokens: 16,
      messages: [{ role: 'user' as const, content: 'Hi' }],
    };
    for (let round = 0; round < 3; round++) {
      const message = await transport.send(request);
      expect(message.content).toEqual([{ type: 'text', text: TRICKY_TEXT }]);
      let streamed = '';
      for await (const event of transport.stream(request)) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
          streamed += event.delta.text;
      }
      expect(streamed).toBe(TRICKY_TEXT);
    }
    // No retry hid a broken connection, and connections were kept alive across exchanges.
    const counts = [...requestsPerSocket.values()];
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(6);
    expect(Math.max(...counts)).toBeGreaterThanOrEqual(3);
  });
});
