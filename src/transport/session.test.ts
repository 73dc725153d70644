import { describe, expect, it } from 'vitest';
import { TransportError } from '../errors.js';
import type { Message, MessageParam, MessageStreamEvent, MessagesRequest } from '../protocol/messages.js';
import { createSession } from './session.js';
import type { ModelTransport } from './types.js';

/** A transport double answering each call with the next scripted outcome. */
function scripted(
  outcomes: (Message | Error | MessageStreamEvent[] | (() => AsyncIterable<MessageStreamEvent>))[],
) {
  const requests: unknown[] = [];
  const next = () => {
    const outcome = outcomes.shift();
    if (outcome === undefined) throw new Error('no outcome scripted');
    return outcome;
  };
  const transport = {
    async send(request: unknown) {
      requests.push(request);
      const outcome = next();
      if (outcome instanceof Error) throw outcome;
      return outcome as Message;
    },
    stream(request: unknown) {
      requests.push(request);
      const outcome = next();
      if (typeof outcome === 'function') return outcome();
      return (async function* () {
        if (outcome instanceof Error) throw outcome;
        yield* outcome as MessageStreamEvent[];
      })();
    },
  } as unknown as ModelTransport;
  return { transport, requests };
}

function message(content: Message['content']): Message {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'm',
    content,
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

const toolUse = (id: string) => ({ type: 'tool_use' as const, id, name: 'lookup', input: {} });
const CALLS = message([{ type: 'text', text: 'calling' }, toolUse('a'), toolUse('b')]);
const TEXT = message([{ type: 'text', text: 'done' }]);

function request(messages: MessageParam[]): MessagesRequest {
  return { model: 'm', max_tokens: 10, messages };
}
const HELLO = request([{ role: 'user', content: 'hi' }]);

/** A request answering `ids` after the assistant turn that called `called`. */
function answering(called: string[], ids: string[]) {
  return request([
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: called.map(toolUse) },
    {
      role: 'user',
      content: ids.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'ok' })),
    },
  ]);
}

async function refusal(promise: Promise<unknown>): Promise<TransportError> {
  try {
    await promise;
  } catch (error) {
    return error as TransportError;
  }
  throw new Error('expected a refusal');
}

async function drain(events: AsyncIterable<MessageStreamEvent>): Promise<MessageStreamEvent[]> {
  const seen: MessageStreamEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

const start = (id: string, type = 'tool_use'): MessageStreamEvent =>
  ({
    type: 'content_block_start',
    index: 0,
    content_block: { type, id, name: 'lookup', input: {} },
  }) as never;
const STOP = { type: 'message_stop' } as MessageStreamEvent;

describe('createSession: the ledger', () => {
  it('starts with nothing pending, no outcome and no turns', () => {
    const session = createSession(scripted([]).transport);
    expect([session.pending, session.lastOutcome, session.turns]).toStrictEqual([[], 'none', 0]);
  });

  it('records the tool_use ids of a delivered message, in order, and counts the turn', async () => {
    const session = createSession(scripted([CALLS, TEXT]).transport);
    expect(await session.send(HELLO)).toBe(CALLS);
    expect([session.pending, session.lastOutcome, session.turns]).toStrictEqual([['a', 'b'], 'ok', 1]);
    await session.send(answering(['a', 'b'], ['b', 'a']));
    expect([session.pending, session.lastOutcome, session.turns]).toStrictEqual([[], 'ok', 2]);
  });

  it('names the missing and the extra tool_results in its refusal, and sends nothing', async () => {
    const { transport, requests } = scripted([CALLS]);
    const session = createSession(transport);
    await session.send(HELLO);
    const missing = await refusal(session.send(answering(['a', 'b'], ['a'])));
    expect([missing.code, missing.message]).toStrictEqual([
      'MODEL_EPAIRING',
      'the request does not answer the pending tool calls: missing tool_result for b',
    ]);
    const both = await refusal(session.send(answering(['a', 'b', 'c', 'd'], ['c', 'd'])));
    expect(both.message).toBe(
      'the request does not answer the pending tool calls: missing tool_result for a, b; tool_result for ids not pending: c, d',
    );
    const duplicate = await refusal(session.send(answering(['a', 'b'], ['a', 'a'])));
    expect(duplicate.message).toBe(
      'the request does not answer the pending tool calls: missing tool_result for b',
    );
    expect(requests).toHaveLength(1);
    expect([session.pending, session.lastOutcome, session.turns]).toStrictEqual([['a', 'b'], 'ok', 1]);
  });

  it('refuses answers repeating a pending id as duplicates', async () => {
    const session = createSession(scripted([message([toolUse('a'), toolUse('a')])]).transport);
    await session.send(HELLO);
    expect(session.pending).toStrictEqual(['a', 'a']);
    const duplicate = await refusal(session.send(answering(['a'], ['a', 'a'])));
    expect(duplicate.message).toBe(
      'the request does not answer the pending tool calls: duplicate tool_result ids',
    );
  });

  it('refuses tool_results nobody asked for, naming them', async () => {
    const session = createSession(scripted([]).transport);
    const extra = await refusal(session.send(answering(['x'], ['x'])));
    expect([extra.code, extra.message]).toStrictEqual([
      'MODEL_EPAIRING',
      'the request does not answer the pending tool calls: tool_result for ids not pending: x',
    ]);
    expect([session.lastOutcome, session.turns]).toStrictEqual(['none', 0]);
  });

  it('leaves the check of an invalid request to the transport, keeping the ledger on its refusal', async () => {
    const invalid = new TransportError('MODEL_EINVAL', 'invalid Messages request');
    const pairing = new TransportError('MODEL_EPAIRING', 'unpaired');
    const session = createSession(scripted([CALLS, invalid, pairing]).transport);
    await session.send(HELLO);
    expect(await refusal(session.send({ model: 'm' } as never))).toBe(invalid);
    expect(await refusal(session.send(answering(['a', 'b'], ['a', 'b'])))).toBe(pairing);
    expect([session.pending, session.lastOutcome, session.turns]).toStrictEqual([['a', 'b'], 'ok', 1]);
  });

  it('ends the turn and drops the obligations on any other failure', async () => {
    const failure = new TransportError('MODEL_EHTTP', 'boom');
    const session = createSession(scripted([CALLS, failure, TEXT]).transport);
    await session.send(HELLO);
    expect(await refusal(session.send(answering(['a', 'b'], ['a', 'b'])))).toBe(failure);
    expect([session.pending, session.lastOutcome, session.turns]).toStrictEqual([[], 'err', 2]);
    await session.send(HELLO);
    expect([session.lastOutcome, session.turns]).toStrictEqual(['ok', 3]);
  });

  it('runs one exchange at a time, and accepts the next once the first settled', async () => {
    let release: (value: Message) => void = () => {};
    const { transport } = scripted([]);
    transport.send = () => new Promise((resolve) => (release = resolve));
    const session = createSession(transport);
    const first = session.send(HELLO);
    const busy = await refusal(session.send(HELLO));
    expect([busy.code, busy.message]).toStrictEqual([
      'MODEL_EINVAL',
      'a session runs one exchange at a time; the previous one is still running',
    ]);
    release(TEXT);
    await first;
    transport.send = async () => TEXT;
    await expect(session.send(HELLO)).resolves.toBe(TEXT);
    expect(session.turns).toBe(2);
  });
});

describe('createSession: abort', () => {
  it('drops pending obligations as an error outcome', async () => {
    const session = createSession(scripted([CALLS]).transport);
    await session.send(HELLO);
    session.abort();
    expect([session.pending, session.lastOutcome, session.turns]).toStrictEqual([[], 'err', 2]);
  });

  it('does nothing when nothing is pending', async () => {
    const session = createSession(scripted([TEXT]).transport);
    session.abort();
    expect([session.lastOutcome, session.turns]).toStrictEqual(['none', 0]);
    await session.send(HELLO);
    session.abort();
    expect([session.lastOutcome, session.turns]).toStrictEqual(['ok', 1]);
  });

  it('does nothing while an exchange runs', async () => {
    const session = createSession(scripted([CALLS]).transport);
    await session.send(HELLO);
    let release: () => void = () => {};
    const { transport } = scripted([
      () =>
        (async function* () {
          await new Promise<void>((resolve) => (release = resolve));
          yield STOP;
        })(),
    ]);
    const streaming = createSession(transport);
    const iterator = streaming.stream(HELLO)[Symbol.asyncIterator]();
    const first = iterator.next();
    await Promise.resolve();
    streaming.abort();
    release();
    await first;
    expect([streaming.lastOutcome, streaming.turns]).toStrictEqual(['none', 0]);
    await iterator.next();
    expect([streaming.lastOutcome, streaming.turns]).toStrictEqual(['ok', 1]);
  });
});

describe('createSession: stream', () => {
  it('sets pending from the tool_use blocks streamed, not from other blocks', async () => {
    const events = [start('a'), start('t', 'text'), start('b'), STOP];
    const session = createSession(scripted([events]).transport);
    expect(await drain(session.stream(HELLO))).toStrictEqual(events);
    expect([session.pending, session.lastOutcome, session.turns]).toStrictEqual([['a', 'b'], 'ok', 1]);
  });

  it('fails a stream that ends before message_stop with MODEL_EPROTO, dropping the obligations', async () => {
    const session = createSession(scripted([CALLS, [start('c')]]).transport);
    await session.send(HELLO);
    const error = await refusal(drain(session.stream(answering(['a', 'b'], ['a', 'b']))));
    expect(error).toBeInstanceOf(TransportError);
    expect([error.code, error.message]).toStrictEqual([
      'MODEL_EPROTO',
      'the stream ended before message_stop',
    ]);
    expect([session.pending, session.lastOutcome, session.turns]).toStrictEqual([[], 'err', 2]);
  });

  it('passes a TransportError on as it is, and wraps anything else as MODEL_EPROTO with its cause', async () => {
    const failure = new TransportError('MODEL_ETIMEOUT', 'slow');
    const odd = new RangeError('odd');
    const session = createSession(scripted([failure, odd]).transport);
    expect(await refusal(drain(session.stream(HELLO)))).toBe(failure);
    const wrapped = await refusal(drain(session.stream(HELLO)));
    expect(wrapped).toBeInstanceOf(TransportError);
    expect([wrapped.code, wrapped.message, wrapped.cause]).toStrictEqual([
      'MODEL_EPROTO',
      'RangeError: odd',
      odd,
    ]);
    expect([session.lastOutcome, session.turns]).toStrictEqual(['err', 2]);
  });

  it('keeps the ledger when the transport refuses a streamed request before sending it', async () => {
    const session = createSession(scripted([CALLS, new TransportError('MODEL_EINVAL', 'bad')]).transport);
    await session.send(HELLO);
    await refusal(drain(session.stream(answering(['a', 'b'], ['a', 'b']))));
    expect([session.pending, session.lastOutcome, session.turns]).toStrictEqual([['a', 'b'], 'ok', 1]);
  });

  it('ends the turn as an error when the caller stops reading', async () => {
    const session = createSession(scripted([[start('a'), STOP]]).transport);
    for await (const _event of session.stream(HELLO)) break;
    expect([session.pending, session.lastOutcome, session.turns]).toStrictEqual([[], 'err', 1]);
  });

  it('checks the pending answers when the iteration starts, with a refusal from the iteration', async () => {
    const session = createSession(scripted([CALLS]).transport);
    await session.send(HELLO);
    const stream = session.stream(HELLO);
    const error = await refusal(drain(stream));
    expect([error.code, error.message]).toStrictEqual([
      'MODEL_EPAIRING',
      'the request does not answer the pending tool calls: missing tool_result for a, b',
    ]);
    expect([session.pending, session.turns]).toStrictEqual([['a', 'b'], 1]);
  });
});
