/**
 * Documents and search results against a real llama.cpp server: what its Chat Completions endpoint
 * takes, and that the transport refuses what it would refuse before sending anything. The model's text
 * is random: these tests pin statuses, errors and what went over the wire.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTransportError } from '../../src/errors.js';
import type { MessagesRequest } from '../../src/protocol/messages.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport } from '../../src/transport/types.js';
import { startLlamaServer, type LlamaServer } from './llama-server.js';
import { startRecordingTap, type RecordingTap } from './recording-tap.js';

/** The smallest well-formed PDF header; the server refuses the part before reading it. */
const PDF_BASE64 = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64');

let server: LlamaServer;
let tap: RecordingTap;
let llamacpp: ModelTransport;
let generic: ModelTransport;

beforeAll(async () => {
  server = await startLlamaServer({ model: 'tiny-tools' });
  tap = await startRecordingTap(server.url);
  const options = { env: {}, tpxToken: 'real-server-token', tpxBaseUrl: `${tap.url}/v1`, maxRetries: 0 };
  llamacpp = createTransport({ ...options, tpxDialect: 'llamacpp' });
  generic = createTransport({ ...options, tpxDialect: 'openai-generic' });
});

afterAll(async () => {
  await llamacpp?.close();
  await generic?.close();
  await tap?.close();
  await server?.stop();
});

function withContent(content: MessagesRequest['messages'][number]['content']): MessagesRequest {
  return { model: 'tiny', max_tokens: 8, messages: [{ role: 'user', content }] };
}

const pdfRequest = withContent([
  { type: 'text', text: 'Summarise this.' },
  {
    type: 'document',
    title: 'a.pdf',
    source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 },
  },
]);

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('the exchange succeeded');
    },
    (error: unknown) => error,
  );
}

describe('documents against llama.cpp', () => {
  it('answers a plain-text document and a search result, sent as text', async () => {
    const before = tap.exchanges.length;
    const message = await llamacpp.send(
      withContent([
        {
          type: 'document',
          title: 'Notes',
          source: { type: 'text', media_type: 'text/plain', data: 'Hello.' },
        },
        {
          type: 'search_result',
          source: 'https://example.com',
          title: 'Example',
          content: [{ type: 'text', text: 'An example page.' }],
        },
      ] as never),
    );
    expect(message.type).toBe('message');
    const exchange = tap.exchanges[before]!;
    expect(exchange.response.status).toBe(200);
    const sent = exchange.request.json as { messages: { content: unknown }[] };
    expect(sent.messages[0]!.content).toEqual([
      { type: 'text', text: 'Notes\nHello.' },
      { type: 'text', text: 'Search result: Example\nSource: https://example.com\n\nAn example page.' },
    ]);
  });

  it('refuses a PDF on the llamacpp dialect before sending anything', async () => {
    const before = tap.exchanges.length;
    const error = await failure(llamacpp.send(pdfRequest));
    expect(isTransportError(error) && error.code).toBe('MODEL_EINVAL');
    expect((error as Error).message).toContain('cannot be sent to llama.cpp server (dialect "llamacpp")');
    expect(tap.exchanges).toHaveLength(before);
  });

  it('is answered 400 by the server itself when a dialect sends the PDF as a file part', async () => {
    // This is the recording behind the llamacpp row of the document table: the server does not take
    // `file` parts, so the llamacpp dialect refuses them before sending.
    const before = tap.exchanges.length;
    const error = await failure(generic.send(pdfRequest));
    const exchange = tap.exchanges[before]!;
    const sent = exchange.request.json as { messages: { content: { type: string }[] }[] };
    expect(sent.messages[0]!.content.map((part) => part.type)).toEqual(['text', 'file']);
    expect(exchange.response.status).toBe(400);
    expect(exchange.response.text).toContain('unsupported content[].type');
    expect(isTransportError(error) && error.code).toBe('MODEL_EHTTP');
    expect(isTransportError(error) && error.status).toBe(400);
    expect(isTransportError(error) && error.body.error.type).toBe('invalid_request_error');
  });
});
