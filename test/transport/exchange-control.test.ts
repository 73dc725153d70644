/**
 * One exchange's control through `createTransport`, against a scripted upstream on loopback: which
 * deadline ends a hanging exchange, the caller's cancellation before and during it, a stream its
 * consumer leaves early (the upstream request ends too), what `onResponse` hears, and the batches the
 * proxy reads a stream in.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { TransportError } from '../../src/errors.js';
import type { MessageStreamEvent } from '../../src/protocol/messages.js';
import { STREAM_BATCHES, streamBatches } from '../../src/transport/stream-batches.js';
import type { ModelTransport, ResponseInfo } from '../../src/transport/types.js';
import {
  anthropicSse,
  helloRequest,
  step,
  textMessage,
  textStreamEvents,
  type Step,
} from '../helpers/scripted-server.js';
import { rejection, useScriptedUpstream } from './scripted-upstream.js';

const KEY = 'sk-ant-exchange-control';

/** Transports on the scripted upstream whose waits between attempts are not slept. */
const upstream = useScriptedUpstream(
  { key: KEY, token: 'tok-exchange-control' },
  { sleep: () => Promise.resolve() },
);
const { anthropicTransport, tpxTransport } = upstream;

/** Resolves once the upstream has received request `index` (polled, at most 2,000 times). */
async function arrived(index: number): Promise<void> {
  for (let poll = 0; poll < 2_000 && upstream.server.requests.length <= index; poll++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A 529 overloaded answer, which the transport retries. */
function overloaded(): Step {
  return step.json({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }, { status: 529 });
}

/** Ends a retry loop gone wrong within a few requests: a status no client retries. */
function notScripted(): Step {
  return step.json(
    { type: 'error', error: { type: 'invalid_request_error', message: 'not scripted' } },
    { status: 418 },
  );
}

function fields(error: TransportError): unknown[] {
  return [error.code, error.status, error.retryable, error.deadline, error.message];
}

/** Deadlines long enough never to fire in a test, so that only the one under test can. */
const LONG = {
  connectTimeoutMs: 10_000,
  firstByteTimeoutMs: 10_000,
  idleTimeoutMs: 10_000,
  timeoutMs: 10_000,
};

describe('the total deadline', () => {
  it('ends an exchange still waiting when the total deadline passes, naming that deadline', async () => {
    const transport = anthropicTransport({ ...LONG, timeoutMs: 50 });
    upstream.answer = () => step.noHeaders();
    const error = await rejection(transport.send(helloRequest()));
    expect(fields(error)).toStrictEqual([
      'MODEL_ETIMEOUT',
      504,
      false,
      'total',
      'the exchange did not finish within 50 ms (total deadline)',
    ]);
  });

  it('with a total deadline of 0 has none: the first-byte deadline is the one that fires', async () => {
    const transport = anthropicTransport({ ...LONG, timeoutMs: 0, firstByteTimeoutMs: 50, maxRetries: 0 });
    upstream.answer = () => step.noHeaders();
    const error = await rejection(transport.send(helloRequest()));
    expect([error.code, error.deadline]).toStrictEqual(['MODEL_ETIMEOUT', 'first-byte']);
  });
});

describe('the caller’s cancellation', () => {
  it('ends an exchange whose signal is already aborted with MODEL_EABORTED, sending nothing', async () => {
    const transport = anthropicTransport();
    upstream.answer = () => step.json(textMessage());
    const from = upstream.server.requests.length;
    const error = await rejection(transport.send(helloRequest(), { signal: AbortSignal.abort() }));
    expect(fields(error)).toStrictEqual([
      'MODEL_EABORTED',
      499,
      false,
      undefined,
      'the exchange was cancelled by the caller',
    ]);
    expect(upstream.server.requests.length - from).toBe(0);
  });

  it('ends an exchange cancelled while it waits for the upstream, and ends the upstream request', async () => {
    const transport = anthropicTransport(LONG);
    upstream.answer = () => step.noHeaders();
    const controller = new AbortController();
    const from = upstream.server.requests.length;
    const pending = rejection(transport.send(helloRequest(), { signal: controller.signal }));
    await arrived(from);
    controller.abort();
    expect(fields(await pending)).toStrictEqual([
      'MODEL_EABORTED',
      499,
      false,
      undefined,
      'the exchange was cancelled by the caller',
    ]);
    expect((await upstream.server.settled(from)).aborted).toBe(true);
  });

  it('leaves no listener on the caller’s signal once the exchange is over', async () => {
    const transport = anthropicTransport();
    upstream.answer = () => step.json(textMessage());
    const controller = new AbortController();
    await transport.send(helloRequest(), { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toStrictEqual([]);
    upstream.answer = () => step.sse(anthropicSse(textStreamEvents()));
    for await (const _event of transport.stream(helloRequest({ stream: true }), {
      signal: controller.signal,
    }));
    expect(getEventListeners(controller.signal, 'abort')).toStrictEqual([]);
  });
});

describe('a stream its consumer leaves early', () => {
  it('ends the upstream request, and the exchange counts as closed by the caller', async () => {
    const transport = anthropicTransport(LONG);
    upstream.answer = () => step.sse(anthropicSse(textStreamEvents().slice(0, 3)), { then: 'hang' });
    const from = upstream.server.requests.length;
    const ends: unknown[] = [];
    const observer = {
      onAttemptEnd(attempt: { error?: TransportError }) {
        ends.push([attempt.error?.code, attempt.error?.message]);
      },
    };
    const seen: string[] = [];
    for await (const event of transport.stream(helloRequest({ stream: true }), { observer })) {
      seen.push(event.type);
      if (event.type === 'content_block_delta') break;
    }
    expect(seen).toStrictEqual(['message_start', 'content_block_start', 'content_block_delta']);
    const record = await upstream.server.settled(from);
    expect(record.aborted).toBe(true);
    expect(ends).toStrictEqual([['MODEL_EABORTED', 'the stream was closed by the caller']]);
  });
});

describe('what onResponse hears', () => {
  it('hears nothing of an exchange that never got a response', async () => {
    const transport = anthropicTransport({ maxRetries: 0 });
    upstream.answer = () => step.reset('before-headers');
    const responses: ResponseInfo[] = [];
    const error = await rejection(
      transport.send(helloRequest(), { onResponse: (info) => responses.push(info) }),
    );
    expect(error.code).toBe('MODEL_ETRANSPORT');
    expect(responses).toStrictEqual([]);
  });

  it('hears a stream once, before its first event, however many chunks it has', async () => {
    const transport = anthropicTransport();
    upstream.answer = () => step.sse(anthropicSse(textStreamEvents(['a', 'b', 'c'])), { frameDelayMs: 1 });
    const heard: unknown[] = [];
    for await (const event of transport.stream(helloRequest({ stream: true }), {
      onResponse: (info) => heard.push(info.status),
    })) {
      heard.push(event.type);
    }
    expect(heard).toStrictEqual([200, ...textStreamEvents(['a', 'b', 'c']).map((event) => event.type)]);
  });

  it('hears the failed answer that ended the exchange once, with its attempt count', async () => {
    const transport = anthropicTransport({ maxRetries: 1 });
    let calls = 0;
    upstream.answer = () => (++calls <= 3 ? overloaded() : notScripted());
    const responses: ResponseInfo[] = [];
    const starts: number[] = [];
    const observer = {
      onAttemptStart(attempt: { number: number }) {
        starts.push(attempt.number);
      },
    };
    await rejection(transport.send(helloRequest(), { onResponse: (info) => responses.push(info), observer }));
    expect(responses.map(({ status, attempts }) => [status, attempts])).toStrictEqual([[529, 2]]);
    expect(starts).toStrictEqual([1, 2]);
  });
});

describe('streamBatches', () => {
  it('reads a transport made by createTransport in the batches the upstream’s chunks made', async () => {
    const transport = anthropicTransport();
    const events = textStreamEvents(['a', 'b']);
    // The whole stream in one write: one chunk, one batch.
    upstream.answer = () =>
      step.handle(({ response }) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(anthropicSse(events).join(''));
      });
    const batches: MessageStreamEvent[][] = [];
    for await (const batch of streamBatches(transport, helloRequest({ stream: true }))) batches.push(batch);
    expect(batches).toStrictEqual([events]);
    expect(typeof (transport as unknown as Record<symbol, unknown>)[STREAM_BATCHES]).toBe('function');
  });

  it('reads any other transport through its stream, one event per batch', async () => {
    const events = textStreamEvents(['a']);
    const calls: unknown[] = [];
    const double = {
      provider: 'anthropic',
      selection: { provider: 'anthropic', reason: 'a test double' },
      send: () => Promise.reject(new Error('not used')),
      async *stream(request: unknown, options: unknown) {
        calls.push([request, options]);
        yield* events;
      },
      close: () => Promise.resolve(),
    } as unknown as ModelTransport;
    const options = { maxRetries: 1 };
    const batches: MessageStreamEvent[][] = [];
    for await (const batch of streamBatches(double, helloRequest({ stream: true }), options))
      batches.push(batch);
    expect(batches).toStrictEqual(events.map((event) => [event]));
    expect(calls).toStrictEqual([[helloRequest({ stream: true }), options]]);
  });
});

describe('x-should-retry on a refused token', () => {
  it('tries a tpx exchange again when the upstream refused the token but says x-should-retry: true', async () => {
    const transport = tpxTransport();
    let calls = 0;
    upstream.answer = () =>
      ++calls === 1
        ? step.json(
            { error: { message: 'token expired', type: 'invalid_request_error' } },
            { status: 401, headers: { 'x-should-retry': 'true' } },
          )
        : step.json({
            id: 'chatcmpl-retried',
            object: 'chat.completion',
            created: 1,
            model: 'served',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
          });
    const message = await transport.send(helloRequest());
    expect([message.id, calls]).toStrictEqual(['msg_chatcmpl-retried', 2]);
  });

  it('does not try it again without the hint', async () => {
    const transport = tpxTransport();
    let calls = 0;
    upstream.answer = () =>
      ++calls <= 3
        ? step.json({ error: { message: 'token expired', type: 'invalid_request_error' } }, { status: 401 })
        : notScripted();
    const error = await rejection(transport.send(helloRequest()));
    expect([error.code, error.status, error.retryable, calls]).toStrictEqual(['MODEL_EAUTH', 401, false, 1]);
  });
});

describe('the wait between attempts', () => {
  it('ends at once when the caller cancels during a long retry-after wait, without a second attempt', async () => {
    const transport = upstream.track({
      anthropicApiKey: KEY,
      anthropicBaseUrl: upstream.server.url,
      ...LONG,
      timeoutMs: 120_000,
      maxRetries: 2,
    });
    upstream.answer = () =>
      step.json(
        { type: 'error', error: { type: 'overloaded_error', message: 'busy' } },
        { status: 529, headers: { 'retry-after': '30' } },
      );
    const controller = new AbortController();
    let starts = 0;
    const observer = {
      onAttemptStart() {
        starts++;
      },
      onAttemptEnd() {
        // The first attempt is over: the transport is now waiting out the 30 s.
        setTimeout(() => controller.abort(), 10);
      },
    };
    const from = upstream.server.requests.length;
    const error = await rejection(transport.send(helloRequest(), { signal: controller.signal, observer }));
    expect([error.code, error.message]).toStrictEqual([
      'MODEL_EABORTED',
      'the exchange was cancelled by the caller',
    ]);
    expect([starts, upstream.server.requests.length - from]).toStrictEqual([1, 1]);
  });
});

describe('the observer', () => {
  it('adds the headers its attempt start returns to the upstream request', async () => {
    const transport = anthropicTransport();
    upstream.answer = () => step.json(textMessage());
    const from = upstream.server.requests.length;
    await transport.send(helloRequest(), {
      observer: { onAttemptStart: () => ({ traceparent: 'trace-1' }) },
    });
    expect(upstream.server.requests.slice(from).map((record) => record.headers['traceparent'])).toStrictEqual(
      ['trace-1'],
    );
  });
});
