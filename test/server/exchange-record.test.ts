/**
 * One proxy exchange as its log line and its telemetry see it: the record handed to telemetry holds
 * exactly the fields that are known (no keys left undefined), the duration and time to first byte are
 * milliseconds since the exchange began, telemetry ends once however often the exchange logs, request
 * bodies are kept only when bodies are logged, and answers carry the upstream's retry headers.
 */
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { TransportError } from '../../src/errors.js';
import { Exchange, type ExchangeEnvironment } from '../../src/server/exchange.js';
import type { ExchangeOutcome, Telemetry } from '../../src/telemetry/exchange-telemetry.js';
import type { InboundRequest } from '../../src/server/types.js';

function request(body = '{"model":"claude-x"}'): InboundRequest {
  return {
    method: 'POST',
    url: '/v1/messages?beta=true',
    headers: {},
    readBody: () => Promise.resolve(Buffer.from(body)),
    signal: new AbortController().signal,
  };
}

function environment(options: { logBodies?: boolean } = {}) {
  const outcomes: ExchangeOutcome[] = [];
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line));
      callback();
    },
  });
  const telemetry: Telemetry = {
    startExchange: () => ({
      streamOpened: () => undefined,
      end: (outcome) => outcomes.push(outcome),
    }),
  };
  const env: ExchangeEnvironment = {
    provider: 'anthropic',
    logger: pino({ level: 'debug' }, destination),
    logBodies: options.logBodies ?? false,
    generateRequestId: () => 'req_own',
    telemetry,
  };
  return { env, outcomes, lines };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the record an exchange hands to telemetry', () => {
  it('holds only the fields known, with no key left undefined', () => {
    const { env, outcomes } = environment();
    const exchange = new Exchange(request(), env);
    exchange.log(404, undefined);
    expect(outcomes).toHaveLength(1);
    const { record, ...rest } = outcomes[0]!;
    expect(rest).toStrictEqual({});
    expect({ ...record, durationMs: 0 }).toStrictEqual({
      requestId: 'req_own',
      method: 'POST',
      path: '/v1/messages',
      provider: 'anthropic',
      status: 404,
      durationMs: 0,
    });
  });

  it('holds everything the exchange learnt, and the time to the first byte', async () => {
    const { env, outcomes } = environment({ logBodies: true });
    const exchange = new Exchange(request(), env);
    await exchange.readJsonObject();
    exchange.isStream = false;
    exchange.usage = { input_tokens: 3, output_tokens: 4 };
    exchange.stopReason = 'end_turn';
    exchange.exchangeOptions().onResponse?.({
      status: 200,
      headers: { 'request-id': 'req_up' },
      attempts: 2,
      upstreamModel: 'up-model',
      upstreamMaxTokens: 64,
    });
    exchange.json(200, '{"ok":true}');
    expect(outcomes).toHaveLength(1);
    const { record, timeToFirstByteMs, ...rest } = outcomes[0]!;
    expect(rest).toStrictEqual({ stopReason: 'end_turn' });
    expect(typeof timeToFirstByteMs).toBe('number');
    expect({ ...record, durationMs: 0 }).toStrictEqual({
      requestId: 'req_up',
      method: 'POST',
      path: '/v1/messages',
      provider: 'anthropic',
      status: 200,
      durationMs: 0,
      model: 'claude-x',
      stream: false,
      attempts: 2,
      upstreamModel: 'up-model',
      upstreamMaxTokens: 64,
      usage: { input_tokens: 3, output_tokens: 4 },
      requestBody: '{"model":"claude-x"}',
      responseBody: '{"ok":true}',
    });
  });

  it('with bodies logged, leaves out a body it never read or answered', () => {
    const { env, outcomes } = environment({ logBodies: true });
    new Exchange(request(), env).log(499, undefined, { clientClosed: true });
    const { record } = outcomes[0]!;
    expect({ ...record, durationMs: 0 }).toStrictEqual({
      requestId: 'req_own',
      method: 'POST',
      path: '/v1/messages',
      provider: 'anthropic',
      status: 499,
      durationMs: 0,
      clientClosed: true,
    });
  });

  it('ends telemetry once, however often the exchange is logged', () => {
    const { env, outcomes, lines } = environment();
    const exchange = new Exchange(request(), env);
    exchange.fail(new TransportError('MODEL_EHTTP', 'upstream broke', { status: 502 }));
    exchange.log(502, undefined);
    expect(lines).toHaveLength(2);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]!.record.error).toBe('MODEL_EHTTP');
  });
});

describe('durations', () => {
  it('are milliseconds since the exchange began, to a tenth, with the first byte no later than the end', async () => {
    const { env, outcomes } = environment();
    const before = performance.now();
    const exchange = new Exchange(request(), env);
    await sleep(40);
    exchange.answerReady();
    await sleep(40);
    exchange.log(200, undefined);
    const elapsed = performance.now() - before;
    const { record, timeToFirstByteMs } = outcomes[0]!;
    expect(record.durationMs).toBeGreaterThanOrEqual(70);
    expect(record.durationMs).toBeLessThanOrEqual(Math.ceil(elapsed));
    expect(Math.round(record.durationMs * 10)).toBe(record.durationMs * 10);
    expect(timeToFirstByteMs).toBeGreaterThanOrEqual(35);
    expect(timeToFirstByteMs).toBeLessThan(record.durationMs);
  });
});

describe('what an exchange keeps and answers', () => {
  it('keeps no copy of the request body text unless bodies are logged', async () => {
    const quiet = new Exchange(request(), environment().env);
    await quiet.readJsonObject();
    expect(quiet.requestBodyText).toBeUndefined();
    const logging = new Exchange(request(), environment({ logBodies: true }).env);
    await logging.readJsonObject();
    expect(logging.requestBodyText).toBe('{"model":"claude-x"}');
  });

  it('answers with the upstream’s retry and rate-limit headers once it reported them', () => {
    const exchange = new Exchange(request(), environment().env);
    expect(exchange.responseHeaders('application/json')).toStrictEqual({
      'content-type': 'application/json',
      'request-id': 'req_own',
    });
    exchange.exchangeOptions().onResponse?.({
      status: 429,
      headers: { 'request-id': 'req_up', 'retry-after': '7', 'x-unrelated': 'no' },
      attempts: 1,
    });
    expect(exchange.responseHeaders('application/json')).toStrictEqual({
      'content-type': 'application/json',
      'request-id': 'req_up',
      'retry-after': '7',
    });
  });
});
