/**
 * `--log-bodies` (`logBodies`) logs both sides of an exchange: the caller's body, each body sent
 * upstream as sent, and the answer — for a stream, the message its events delivered — never the
 * credentials.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageStreamEvent } from '../../src/protocol/messages.js';
import { accumulateStream } from '../helpers/accumulate-stream.js';
import { startTpxProxy, UPSTREAM_TOKEN, type TpxProxy } from './serve-support.js';

function sseEvents(text: string): MessageStreamEvent[] {
  return text
    .split('\n\n')
    .map((frame) => frame.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice('data: '.length)) as MessageStreamEvent);
}

describe('--log-bodies', () => {
  let proxy: TpxProxy;
  beforeAll(async () => {
    proxy = await startTpxProxy({ serve: { logBodies: true, proxyToken: 'proxy-token-51d0' } });
  });
  afterAll(async () => {
    await proxy.close();
  });

  const post = (body: unknown) =>
    fetch(`${proxy.server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'proxy-token-51d0' },
      body: JSON.stringify(body),
    });
  const exchangeLines = () => proxy.logs.lines().filter((line) => line['msg'] === 'exchange');

  it('logs the caller body and the body sent upstream, as sent, without credentials', async () => {
    const response = await post({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    expect(response.status).toBe(200);
    const answer = await response.text();
    const line = exchangeLines().at(-1)!;
    expect(JSON.parse(line['requestBody'] as string)).toMatchObject({ system: 'Be brief.' });
    const sent = line['upstreamRequestBodies'] as { attempt: number; body: string }[];
    expect(sent).toHaveLength(1);
    expect(sent[0]!.attempt).toBe(1);
    // The body the mock model received is the one logged.
    const received = proxy.mock.requests.at(-1)!;
    expect(JSON.parse(sent[0]!.body)).toEqual(received.body);
    expect(JSON.parse(sent[0]!.body)).toMatchObject({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there' },
      ],
    });
    expect(line['responseBody']).toBe(answer);
    expect(proxy.logs.text()).not.toContain(UPSTREAM_TOKEN);
    expect(proxy.logs.text()).not.toContain('proxy-token-51d0');
  });

  it('logs the message a streamed answer delivered, accumulated from its events', async () => {
    const response = await post({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      stream: true,
      messages: [{ role: 'user', content: 'Stream to me' }],
    });
    expect(response.status).toBe(200);
    const delivered = accumulateStream(sseEvents(await response.text()));
    const line = exchangeLines().at(-1)!;
    expect(line['stream']).toBe(true);
    expect(JSON.parse(line['responseBody'] as string)).toEqual(delivered);
    expect((line['upstreamRequestBodies'] as unknown[]).length).toBe(1);
  });
});
