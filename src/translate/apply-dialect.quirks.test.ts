/**
 * The dialect layer on hand-built Chat Completions bodies, responses and chunks: each quirk it undoes or
 * applies, with the shapes real servers send (ids missing, arguments null or as objects, other choices).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type {
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatCompletionResponse,
  ChatMessage,
} from '../protocol/chat-completions.js';
import {
  applyDialectToRequest,
  carryThoughtSignature,
  createChunkNormalizer,
  normalizeResponse,
  splitThoughtSignature,
} from './apply-dialect.js';
import { DIALECTS, type DialectProfile } from './dialects.js';

const loose = <T>(value: unknown): T => value as T;

function chatBody(fields: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest {
  return { model: 'm', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 64, ...fields };
}

function firstCalls(chunk: ChatCompletionChunk): Record<string, unknown>[] {
  return loose<Record<string, unknown>[]>(chunk.choices?.[0]?.delta?.tool_calls);
}

const signed = (signature: string) => ({ extra_content: { google: { thought_signature: signature } } });

describe('splitThoughtSignature', () => {
  it('gives back an id without a signature as it is', () => {
    expect(splitThoughtSignature('call_1')).toStrictEqual({ id: 'call_1', signature: undefined });
  });

  it('takes apart an id that carries a signature, the id possibly empty', () => {
    expect(splitThoughtSignature(carryThoughtSignature('call_1', 'SIG'))).toStrictEqual({
      id: 'call_1',
      signature: 'SIG',
    });
    expect(splitThoughtSignature(carryThoughtSignature('', 'S:G'))).toStrictEqual({
      id: '',
      signature: 'S:G',
    });
  });
});

describe('applyDialectToRequest: reasoning effort', () => {
  it('asks OpenRouter for reasoning with its reasoning object, and not at all without an effort', () => {
    const withEffort = applyDialectToRequest(DIALECTS.openrouter, chatBody({ reasoning_effort: 'high' }));
    expect(withEffort.reasoning).toStrictEqual({ effort: 'high' });
    expect(withEffort).not.toHaveProperty('reasoning_effort');
    expect(applyDialectToRequest(DIALECTS.openrouter, chatBody())).toStrictEqual(chatBody());
  });

  it('drops the effort where the server takes none, and keeps it where it does', () => {
    expect(applyDialectToRequest(DIALECTS.mistral, chatBody({ reasoning_effort: 'low' }))).not.toHaveProperty(
      'reasoning_effort',
    );
    expect(
      applyDialectToRequest(DIALECTS.openai, chatBody({ reasoning_effort: 'low' })).reasoning_effort,
    ).toBe('low');
  });

  it('fails loudly on a profile with a reasoning style it does not know', () => {
    const profile = loose<DialectProfile>({ ...DIALECTS.openai, reasoningRequest: 'telepathy' });
    expect(() => applyDialectToRequest(profile, chatBody({ reasoning_effort: 'low' }))).toThrow(
      'unknown reasoning request style telepathy',
    );
  });
});

describe('applyDialectToRequest: messages', () => {
  it('passes messages of a role it does not shape through unchanged', () => {
    const message = loose<ChatMessage>({ role: 'function', name: 'f', content: 'x' });
    expect(applyDialectToRequest(DIALECTS.openai, chatBody({ messages: [message] })).messages).toStrictEqual([
      message,
    ]);
  });

  it('passes an unsigned tool answer through as it is', () => {
    const answer: ChatMessage = { role: 'tool', tool_call_id: 'call_1', content: 'ok' };
    expect(applyDialectToRequest(DIALECTS.gemini, chatBody({ messages: [answer] })).messages[0]).toBe(answer);
  });

  it('replays reasoning only for assistant turns that really call tools, where the dialect says tool turns', () => {
    const turn = (toolCalls: unknown[]) =>
      loose<ChatMessage>({
        role: 'assistant',
        content: 'a',
        reasoning_content: 'why',
        tool_calls: toolCalls,
      });
    const sent = applyDialectToRequest(
      DIALECTS.vllm,
      chatBody({
        messages: [
          { role: 'user', content: 'Go' },
          turn([]),
          turn([{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }]),
        ],
      }),
    ).messages;
    expect(sent.map((message) => 'reasoning_content' in message)).toStrictEqual([false, false, true]);
  });

  it('sends a signed tool answer with an id derived from the signature when the call had none', () => {
    const derived = `call_${createHash('sha256').update('SIG', 'utf8').digest('hex').slice(0, 24)}`;
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: carryThoughtSignature('', 'SIG'),
            type: 'function',
            function: { name: 'f', arguments: '{}' },
          },
          { id: 'plain', type: 'function', function: { name: 'g', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: carryThoughtSignature('', 'SIG'), content: 'ok' },
      { role: 'tool', tool_call_id: 'plain', content: 'ok' },
    ];
    const sent = applyDialectToRequest(DIALECTS.gemini, chatBody({ messages })).messages;
    expect(sent.slice(1)).toStrictEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: derived,
            type: 'function',
            function: { name: 'f', arguments: '{}' },
            extra_content: { google: { thought_signature: 'SIG' } },
          },
          { id: 'plain', type: 'function', function: { name: 'g', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: derived, content: 'ok' },
      { role: 'tool', tool_call_id: 'plain', content: 'ok' },
    ]);
  });
});

describe('normalizeResponse', () => {
  const response = (message: Record<string, unknown>, extraChoices: unknown[] = []): ChatCompletionResponse =>
    loose({
      id: 'r',
      object: 'chat.completion',
      created: 0,
      model: 'gemini',
      choices: [
        { index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: 'tool_calls' },
        ...extraChoices,
      ],
    });
  const call = (id: string | undefined, extra: Record<string, unknown> = {}) => ({
    ...(id === undefined ? {} : { id }),
    type: 'function',
    function: { name: 'f', arguments: '{}' },
    ...extra,
  });

  it("carries a message's plain thought_signature field in its first call's id", () => {
    const normalized = normalizeResponse(
      DIALECTS.gemini,
      response({ thought_signature: 'SIG', tool_calls: [call('c1'), call('c2')] }),
    );
    expect(normalized.choices[0]?.message.tool_calls?.map((one) => one.id)).toStrictEqual([
      carryThoughtSignature('c1', 'SIG'),
      'c2',
    ]);
  });

  it("uses the calls' own signatures over the message's, and gives an unsigned call none", () => {
    const normalized = normalizeResponse(
      DIALECTS.gemini,
      response({ ...signed('MSG'), tool_calls: [call('c1'), call(undefined, signed('OWN'))] }),
    );
    expect(normalized.choices[0]?.message.tool_calls?.map((one) => one.id)).toStrictEqual([
      'c1',
      carryThoughtSignature('', 'OWN'),
    ]);
  });

  it('returns the same response when no call is signed or there are no calls', () => {
    const unsigned = response({ tool_calls: [call('c1')] });
    expect(normalizeResponse(DIALECTS.gemini, unsigned)).toBe(unsigned);
    const noCalls = response({ content: 'hi', tool_calls: [] });
    expect(normalizeResponse(DIALECTS.gemini, noCalls)).toBe(noCalls);
    const nullCalls = response({ content: 'hi', tool_calls: null, thought_signature: 'SIG' });
    expect(normalizeResponse(DIALECTS.gemini, nullCalls)).toBe(nullCalls);
  });
});

describe('createChunkNormalizer', () => {
  const chunk = (
    toolCalls: unknown[],
    index: unknown = 0,
    delta: Record<string, unknown> = {},
  ): ChatCompletionChunk =>
    loose({ choices: [{ index, delta: { ...delta, tool_calls: toolCalls }, finish_reason: null }] });
  const call = (index: unknown, fields: Record<string, unknown>) => ({ index, type: 'function', ...fields });

  it('returns chunks unchanged for a dialect without stream quirks', () => {
    const normalize = createChunkNormalizer(DIALECTS.openai);
    const input = loose<ChatCompletionChunk>({
      choices: [{ index: 0, delta: {}, usage: { prompt_tokens: 1 } }],
    });
    expect(normalize(input)).toBe(input);
  });

  it('leaves choices other than the first, and chunks without choices or tool calls, alone', () => {
    const normalize = createChunkNormalizer(DIALECTS.gemini);
    const other = chunk([call(0, { id: 'c', function: { name: 'f', arguments: '{}' }, ...signed('S') })], 1);
    expect(normalize(other)).toBe(other);
    const noChoices = loose<ChatCompletionChunk>({ choices: null });
    expect(normalize(noChoices)).toBe(noChoices);
    const noCalls = loose<ChatCompletionChunk>({ choices: [{ index: 0, delta: { content: 'x' } }] });
    expect(normalize(noCalls)).toBe(noCalls);
    const noDelta = loose<ChatCompletionChunk>({ choices: [{ index: 0 }] });
    expect(normalize(noDelta)).toBe(noDelta);
  });

  it('treats a first choice without an index, or with a null one, as choice 0', () => {
    const normalize = createChunkNormalizer(DIALECTS.gemini);
    const out = normalize(
      chunk([call(0, { id: 'c', function: { name: 'f', arguments: '{}' }, ...signed('S') })], null),
    );
    expect(firstCalls(out)[0]?.['id']).toBe(carryThoughtSignature('c', 'S'));
    const missing = createChunkNormalizer(DIALECTS.gemini)(
      loose<ChatCompletionChunk>({
        choices: [
          {
            delta: {
              tool_calls: [call(0, { id: 'c', function: { name: 'f', arguments: '{}' }, ...signed('S') })],
            },
          },
        ],
      }),
    );
    expect(firstCalls(missing)[0]?.['id']).toBe(carryThoughtSignature('c', 'S'));
  });

  it("gives the delta's signature to the first named call only, and carries it without an id", () => {
    const normalize = createChunkNormalizer(DIALECTS.gemini);
    const out = normalize(
      chunk(
        [
          call(0, { function: { arguments: '' } }),
          call(0, { function: { name: 'f', arguments: '{}' } }),
          call(1, { id: 'c2', function: { name: 'g', arguments: '{}' } }),
        ],
        0,
        signed('DELTA'),
      ),
    );
    expect(firstCalls(out).map((one) => one['id'])).toStrictEqual([
      undefined,
      carryThoughtSignature('', 'DELTA'),
      'c2',
    ]);
  });

  it('keeps raw call entries that are not objects as they are', () => {
    const normalize = createChunkNormalizer(DIALECTS.ollama);
    const out = normalize(chunk(['junk', call(0, { id: 'c', function: { name: 'f', arguments: '{}' } })]));
    expect(firstCalls(out)).toStrictEqual([
      'junk',
      { index: 0, type: 'function', id: 'c', function: { name: 'f', arguments: '{}' } },
    ]);
  });

  it('starts another call on the same index only once the current one is named and its arguments are whole JSON', () => {
    const normalize = createChunkNormalizer(DIALECTS.ollama);
    const indexes = [
      chunk([call(0, { function: { name: 'f', arguments: null } })]),
      chunk([call(0, { function: { name: 'g', arguments: '   ' } })]),
      chunk([call(0, { function: { name: 'h', arguments: '{"a":' } })]),
      chunk([call(0, { function: { name: 'i', arguments: '1}' } })]),
      chunk([call(0, { function: { name: 'j', arguments: { b: 2 } } })]),
      chunk([call(0, { function: { name: 'k' } })]),
    ]
      .map(normalize)
      .map((out) => firstCalls(out)[0]?.['index']);
    // f has no arguments, so g joins it; g's blank text still is not JSON, nor is h's "{"a":"; "1}" completes
    // it; j (arguments given as an object) is a new call, and k follows a call with whole JSON.
    expect(indexes).toStrictEqual([0, 0, 0, 0, 1, 2]);
  });

  it('starts another call when a different id arrives on an index whose call is whole', () => {
    const normalize = createChunkNormalizer(DIALECTS.ollama);
    const indexes = [
      chunk([call(0, { id: 'a', function: { name: 'f', arguments: '{}' } })]),
      chunk([call(0, { id: 'a', function: { arguments: '' } })]),
      chunk([call(0, { id: 'b', function: { arguments: '{}' } })]),
    ]
      .map(normalize)
      .map((out) => firstCalls(out)[0]?.['index']);
    expect(indexes).toStrictEqual([0, 0, 1]);
  });

  it('leaves calls without a usable index alone', () => {
    const normalize = createChunkNormalizer(DIALECTS.ollama);
    for (const index of [undefined, -1, 1.5, '0']) {
      const input = chunk([call(index, { id: 'c', function: { name: 'f', arguments: '{}' } })]);
      expect(normalize(input)).toBe(input);
    }
  });

  it('keeps the chunk usage Kimi sends at the top level, and lifts none when no choice has usage', () => {
    const normalize = createChunkNormalizer(DIALECTS.kimi);
    const top = loose<ChatCompletionChunk>({
      choices: [{ index: 0, delta: {}, usage: { prompt_tokens: 9 } }],
      usage: { prompt_tokens: 1 },
    });
    expect(normalize(top)).toBe(top);
    const none = loose<ChatCompletionChunk>({ choices: [{ index: 0, delta: {} }, 'junk'] });
    expect(normalize(none)).toBe(none);
    const noChoices = loose<ChatCompletionChunk>({ usage: null });
    expect(normalize(noChoices)).toBe(noChoices);
  });

  it('lifts choice usage only for the dialect that sends it there', () => {
    const input = loose<ChatCompletionChunk>({
      choices: [{ index: 0, delta: {}, usage: { prompt_tokens: 3 } }],
    });
    expect(createChunkNormalizer(DIALECTS.gemini)(input)).toBe(input);
  });

  it('leaves a chunk whose calls need no change as it is', () => {
    const input = chunk([call(0, { id: 'c', function: { name: 'f', arguments: '{}' } })]);
    expect(createChunkNormalizer(DIALECTS.ollama)(input)).toBe(input);
  });

  it('carries signatures only for the dialects that echo them', () => {
    const input = chunk([call(0, { id: 'c', function: { name: 'f', arguments: '{}' }, ...signed('S') })]);
    expect(firstCalls(createChunkNormalizer(DIALECTS.ollama)(input))[0]?.['id']).toBe('c');
  });

  it('keeps entries that are null, calls without a function, and ids that are not strings workable', () => {
    const gemini = createChunkNormalizer(DIALECTS.gemini);
    const out = gemini(
      chunk([
        null,
        call(0, { id: 'c' }),
        call(1, { id: 5, function: { name: 'f', arguments: '{}' }, ...signed('S') }),
      ]),
    );
    expect(firstCalls(out)).toStrictEqual([
      null,
      { index: 0, type: 'function', id: 'c' },
      {
        index: 1,
        type: 'function',
        id: carryThoughtSignature('', 'S'),
        function: { name: 'f', arguments: '{}' },
        ...signed('S'),
      },
    ]);
  });

  it('keeps fragments without a name, or without a new id, on the call their index holds', () => {
    const indexesOf = (chunks: ChatCompletionChunk[]) => {
      const normalize = createChunkNormalizer(DIALECTS.ollama);
      return chunks.map(normalize).map((out) => firstCalls(out)[0]?.['index']);
    };
    // A whole call, then a fragment with neither name nor id: the same call.
    expect(
      indexesOf([
        chunk([call(0, { id: 'a', function: { name: 'f', arguments: '{}' } })]),
        chunk([call(0, { function: { arguments: '' } })]),
        chunk([call(0, { id: 'b', function: { arguments: '{}' } })]),
      ]),
    ).toStrictEqual([0, 0, 1]);
    // A whole call without an id: an id arriving later belongs to it.
    expect(
      indexesOf([
        chunk([call(0, { function: { name: 'f', arguments: '{}' } })]),
        chunk([call(0, { id: 'x', function: { arguments: '' } })]),
      ]),
    ).toStrictEqual([0, 0]);
    // An empty id is no id.
    expect(
      indexesOf([
        chunk([call(0, { id: '', function: { name: 'f', arguments: '{}' } })]),
        chunk([call(0, { id: 'b', function: { arguments: '' } })]),
      ]),
    ).toStrictEqual([0, 0]);
    // Arguments before any name: the name that follows belongs to the same call.
    expect(
      indexesOf([
        chunk([call(0, { function: { arguments: '{}' } })]),
        chunk([call(0, { function: { name: 'g' } })]),
      ]),
    ).toStrictEqual([0, 0]);
    // Calls without a function object are kept as they are.
    expect(indexesOf([chunk([call(0, { id: 'a' })]), chunk([call(0, { id: 'a' })])])).toStrictEqual([0, 0]);
  });
});
