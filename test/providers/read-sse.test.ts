/**
 * Server-sent events from a response body, chunk by chunk: one batch per chunk, a byte order mark only
 * at the very start, characters split across chunks, a last event without its blank line, and the size
 * limit over the whole stream.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpResponse } from '../../src/providers/http-exchange.js';
import { readSse, type SseMessage } from '../../src/providers/read-sse.js';
import { ResponseBody } from '../../src/providers/response-body.js';
import { testAttempt, type TestAttempt } from './attempt-context.js';

let attempt: TestAttempt | undefined;
afterEach(async () => {
  await attempt?.close();
  attempt = undefined;
});

function body(...chunks: (string | number[])[]): HttpResponse {
  return {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    body: ResponseBody.of(
      chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk))),
    ),
  };
}

async function batches(response: HttpResponse, maxResponseBytes = 1024 * 1024): Promise<SseMessage[][]> {
  attempt = testAttempt('tpx', { maxResponseBytes });
  const seen: SseMessage[][] = [];
  for await (const batch of readSse(response, attempt.context)) seen.push(batch);
  return seen;
}

describe('readSse', () => {
  it('gives the messages each chunk completed as one batch, and none for a chunk that completed none', async () => {
    expect(await batches(body('event: a\ndata: 1\n\n', 'data: 2\n\ndata: ', '3\n\n'))).toStrictEqual([
      [{ event: 'a', data: '1' }],
      [{ event: undefined, data: '2' }],
      [{ event: undefined, data: '3' }],
    ]);
  });

  it('drops a byte order mark that opens the stream, even split across chunks, and only there', async () => {
    expect(await batches(body('\ufeffdata: x\n\n'))).toStrictEqual([[{ event: undefined, data: 'x' }]]);
    expect(await batches(body([0xef], [0xbb, 0xbf, ...Buffer.from('data: y\n\n')]))).toStrictEqual([
      [{ event: undefined, data: 'y' }],
    ]);
    // Later, a byte order mark is part of the line: "\ufeffdata" is a field nobody knows.
    expect(await batches(body('data: a\n\n', '\ufeffdata: b\n\n'))).toStrictEqual([
      [{ event: undefined, data: 'a' }],
    ]);
  });

  it('joins a character split across chunks', async () => {
    const text = Buffer.from('data: é€\n\n');
    expect(
      await batches(body([...text.subarray(0, 7)], [...text.subarray(7, 9)], [...text.subarray(9)])),
    ).toStrictEqual([[{ event: undefined, data: 'é€' }]]);
  });

  it('delivers a last event that lacks its blank line, or even the end of its line', async () => {
    expect(await batches(body('data: 1\n\ndata: tail\n'))).toStrictEqual([
      [{ event: undefined, data: '1' }],
      [{ event: undefined, data: 'tail' }],
    ]);
    expect(await batches(body('data: cut'))).toStrictEqual([[{ event: undefined, data: 'cut' }]]);
    expect(await batches(body('data: 1\n\n', ''))).toStrictEqual([[{ event: undefined, data: '1' }]]);
  });

  it('reads a stream of exactly the size limit, and refuses one byte more naming the limit', async () => {
    const stream = 'data: 12345\n\n';
    expect(await batches(body(stream), stream.length)).toStrictEqual([[{ event: undefined, data: '12345' }]]);
    const error = await batches(body(stream, 'd'), stream.length).catch((failure: unknown) => failure);
    expect(error).toMatchObject({
      code: 'MODEL_ETOOBIG',
      status: 502,
      provider: 'tpx',
      message: `the tpx stream is larger than the limit of ${stream.length} bytes (maxResponseBytes)`,
    });
  });

  it('lets go of the body when the reader stops early', async () => {
    const response = body('data: 1\n\n', 'data: 2\n\n');
    attempt = testAttempt('tpx');
    for await (const batch of readSse(response, attempt.context)) {
      expect(batch).toStrictEqual([{ event: undefined, data: '1' }]);
      break;
    }
    expect(response.body.destroyed).toBe(true);
  });
});
