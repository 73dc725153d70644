import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type {
  ChatAssistantMessage,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatCompletionResponse,
} from '../protocol/chat-completions.js';
import type { MessagesRequest } from '../protocol/messages.js';
import {
  applyDialectToRequest,
  carryThoughtSignature,
  createChunkNormalizer,
  normalizeResponse,
  splitThoughtSignature,
  type SignedChatToolCall,
} from './apply-dialect.js';
import { DIALECTS, DIALECT_NAMES, type DialectName } from './dialects.js';
import { decodeToolId, encodeToolId } from './tool-id-codec.js';
import { translateRequest } from './translate-request.js';

/** A request that uses every field a dialect may drop, with a tool turn and a text turn in the history. */
function fullRequest(toolUseId = 'toolu_01Weather'): MessagesRequest {
  return {
    model: 'claude-test',
    max_tokens: 256,
    stream: true,
    thinking: { type: 'enabled', budget_tokens: 8000 },
    metadata: { user_id: 'user-42' },
    tools: [
      { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
    ],
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    messages: [
      { role: 'user', content: 'Hello' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Just greet.', signature: '' },
          { type: 'text', text: 'Hi!' },
        ],
      },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should call the tool.', signature: '' },
          { type: 'tool_use', id: toolUseId, name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: 'Sunny' }] },
    ],
  };
}

function shaped(dialect: DialectName, request = fullRequest()) {
  const { body } = translateRequest(request, { maxTokensField: DIALECTS[dialect].maxTokensField });
  return applyDialectToRequest(DIALECTS[dialect], body);
}

function assistants(body: ChatCompletionRequest): ChatAssistantMessage[] {
  return body.messages.filter((message): message is ChatAssistantMessage => message.role === 'assistant');
}

describe('applyDialectToRequest: optional fields', () => {
  // dialect → [stream_options, parallel_tool_calls, reasoning_effort, reasoning object, user]
  const table: Record<DialectName, [boolean, boolean, boolean, boolean, boolean]> = {
    openai: [true, true, true, false, true],
    azure: [true, true, true, false, true],
    vllm: [true, true, true, false, true],
    llamacpp: [true, true, false, false, false],
    ollama: [true, false, true, false, false],
    deepseek: [true, false, true, false, false],
    mistral: [false, true, false, false, false],
    kimi: [true, false, false, false, false],
    groq: [true, true, true, false, true],
    openrouter: [true, true, false, true, true],
    gemini: [true, false, true, false, false],
    vertex: [true, false, true, false, false],
    'openai-generic': [true, true, true, false, true],
  };

  it.each(DIALECT_NAMES)('sends %s only the fields it accepts', (dialect) => {
    const body = shaped(dialect);
    const [streamOptions, parallel, effort, reasoningObject, user] = table[dialect];
    expect('stream_options' in body).toBe(streamOptions);
    expect('parallel_tool_calls' in body).toBe(parallel);
    expect('reasoning_effort' in body).toBe(effort);
    expect('reasoning' in body).toBe(reasoningObject);
    expect('user' in body).toBe(user);
    if (effort) expect(body.reasoning_effort).toBe('medium');
    if (reasoningObject) expect(body.reasoning).toEqual({ effort: 'medium' });
  });

  it('leaves the translated body it was given unchanged', () => {
    const { body } = translateRequest(fullRequest());
    const snapshot = structuredClone(body);
    applyDialectToRequest(DIALECTS.mistral, body);
    applyDialectToRequest(DIALECTS.openrouter, body);
    expect(body).toEqual(snapshot);
  });
});

describe('applyDialectToRequest: reasoning replay', () => {
  it.each([
    ['deepseek', [false, true]],
    ['kimi', [false, true]],
    ['vllm', [false, true]],
    ['llamacpp', [false, true]],
    ['openai-generic', [true, true]],
    ['openai', [false, false]],
    ['groq', [false, false]],
    ['mistral', [false, false]],
    ['gemini', [false, false]],
  ] as const)('%s keeps reasoning_content on [text turn, tool turn] = %j', (dialect, [onText, onTool]) => {
    const [textTurn, toolTurn] = assistants(shaped(dialect));
    expect('reasoning_content' in textTurn!).toBe(onText);
    expect('reasoning_content' in toolTurn!).toBe(onTool);
    if (onTool) expect(toolTurn!.reasoning_content).toBe('I should call the tool.');
  });
});

describe('applyDialectToRequest: Mistral tool-call ids', () => {
  it('sends nine-character ids, the same on the call and its answer', () => {
    const body = shaped('mistral');
    const call = assistants(body)[1]!.tool_calls![0]!;
    expect(call.id).toMatch(/^[A-Za-z0-9]{9}$/);
    const answer = body.messages.find((message) => message.role === 'tool');
    expect(answer).toMatchObject({ role: 'tool', tool_call_id: call.id });
  });

  it('keeps an id Mistral emitted itself', () => {
    const body = shaped('mistral', fullRequest('gSIMJiOkT'));
    expect(assistants(body)[1]!.tool_calls![0]!.id).toBe('gSIMJiOkT');
  });

  it('leaves ids alone for other dialects', () => {
    expect(assistants(shaped('openai'))[1]!.tool_calls![0]!.id).toBe('toolu_01Weather');
  });
});

describe('thought signatures', () => {
  const signature = 'AVSoXO4AzAXs7GGv+si/baQcsM2Q8ME9V1RQ==';

  it('survive the tool-id codec both ways, with or without a provider id', () => {
    for (const providerId of ['function-call-1', '']) {
      const carried = carryThoughtSignature(providerId, signature);
      const callerId = encodeToolId(carried, 1, () => 'unused');
      expect(callerId).toMatch(/^tpx_[A-Za-z0-9_-]+$/);
      expect(splitThoughtSignature(decodeToolId(callerId))).toEqual({ id: providerId, signature });
    }
  });

  it('are echoed to Gemini on the tool call, with the id it sent, and the answer keeps that id', () => {
    const callerId = encodeToolId(carryThoughtSignature('function-call-1', signature), 1, () => 'x');
    const body = shaped('gemini', fullRequest(callerId));
    const call = assistants(body)[1]!.tool_calls![0] as SignedChatToolCall;
    expect(call.id).toBe('function-call-1');
    expect(call.extra_content).toEqual({ google: { thought_signature: signature } });
    expect(body.messages.find((message) => message.role === 'tool')).toMatchObject({
      tool_call_id: 'function-call-1',
    });
  });

  it('give a call Gemini sent without an id a stable id derived from the signature', () => {
    const callerId = encodeToolId(carryThoughtSignature('', signature), 1, () => 'x');
    const first = shaped('vertex', fullRequest(callerId));
    const second = shaped('vertex', fullRequest(callerId));
    const id = assistants(first)[1]!.tool_calls![0]!.id;
    expect(id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(assistants(second)[1]!.tool_calls![0]!.id).toBe(id);
    expect(first.messages.find((message) => message.role === 'tool')).toMatchObject({ tool_call_id: id });
  });

  it('are dropped, leaving the plain id, for a dialect that does not echo them', () => {
    const callerId = encodeToolId(carryThoughtSignature('function-call-1', signature), 1, () => 'x');
    const call = assistants(shaped('openai', fullRequest(callerId)))[1]!.tool_calls![0] as SignedChatToolCall;
    expect(call.id).toBe('function-call-1');
    expect(call.extra_content).toBeUndefined();
  });
});

describe('normalizeResponse', () => {
  const recorded = JSON.parse(
    readFileSync(
      new URL(
        '../../test/dialects/__fixtures__/gemini/gemini-2.5-pro.tool-call-empty-id.json',
        import.meta.url,
      ),
      'utf8',
    ),
  ) as ChatCompletionResponse;

  it("carries Gemini 2.5's message-level signature in the first tool call's id", () => {
    const normalized = normalizeResponse(DIALECTS.gemini, recorded);
    const id = normalized.choices[0]!.message.tool_calls![0]!.id!;
    const signature = (
      recorded.choices[0]!.message['extra_content'] as { google: { thought_signature: string } }
    ).google.thought_signature;
    expect(splitThoughtSignature(id)).toEqual({ id: '', signature });
  });

  it('returns the same response for dialects without signatures', () => {
    expect(normalizeResponse(DIALECTS.openai, recorded)).toBe(recorded);
  });
});

describe('createChunkNormalizer', () => {
  const chunk = (toolCalls: unknown[], extra: Record<string, unknown> = {}): ChatCompletionChunk => ({
    choices: [{ index: 0, delta: { tool_calls: toolCalls as never }, finish_reason: null }],
    ...extra,
  });
  const call = (
    index: number | undefined,
    id: string | undefined,
    name: string | undefined,
    args: string,
  ) => ({
    ...(index === undefined ? {} : { index }),
    ...(id === undefined ? {} : { id }),
    type: 'function',
    function: { ...(name === undefined ? {} : { name }), arguments: args },
  });
  const indexes = (chunks: ChatCompletionChunk[]) =>
    chunks.map((one) => (one.choices![0]!.delta!.tool_calls ?? []).map((item) => item.index));

  it('splits whole calls that Gemini streams on one index into calls 0, 1, 2', () => {
    const normalize = createChunkNormalizer(DIALECTS.gemini);
    const out = [
      chunk([call(0, '', 'get_weather', '{"city":"Paris"}')]),
      chunk([call(0, '', 'get_weather', '{"city":"Rome"}'), call(0, '', 'get_time', '{}')]),
    ].map(normalize);
    expect(indexes(out)).toEqual([[0], [1, 2]]);
  });

  it('splits Ollama calls that all arrive on index 0 without ids', () => {
    const normalize = createChunkNormalizer(DIALECTS.ollama);
    const out = [chunk([call(0, undefined, 'a', '{}')]), chunk([call(0, undefined, 'b', '{"x":1}')])].map(
      normalize,
    );
    expect(indexes(out)).toEqual([[0], [1]]);
  });

  it('keeps argument fragments of one call on its index', () => {
    const normalize = createChunkNormalizer(DIALECTS.ollama);
    const out = [
      chunk([call(0, 'c1', 'a', '')]),
      chunk([call(0, undefined, undefined, '{"x"')]),
      chunk([call(0, undefined, undefined, ':1}')]),
      chunk([call(1, 'c2', 'b', '{}')]),
    ].map(normalize);
    expect(indexes(out)).toEqual([[0], [0], [0], [1]]);
  });

  it('does not split for dialects that stream calls the OpenAI way', () => {
    const normalize = createChunkNormalizer(DIALECTS.openai);
    const input = chunk([call(0, 'c1', 'a', '{}')]);
    expect(normalize(input)).toBe(input);
  });

  it('carries a streamed thought signature in the call id, also for later fragments of the call', () => {
    const normalize = createChunkNormalizer(DIALECTS.gemini);
    const signed = {
      ...call(0, 'fc-1', 'get_time', '{'),
      extra_content: { google: { thought_signature: 'SIG' } },
    };
    const [first, second] = [chunk([signed]), chunk([call(0, 'fc-1', undefined, '}')])].map(normalize);
    expect(first!.choices![0]!.delta!.tool_calls![0]!.id).toBe(carryThoughtSignature('fc-1', 'SIG'));
    expect(second!.choices![0]!.delta!.tool_calls![0]!.id).toBe(carryThoughtSignature('fc-1', 'SIG'));
  });

  it('lifts the usage Kimi sends inside choices[0] to the chunk', () => {
    const normalize = createChunkNormalizer(DIALECTS.kimi);
    const usage = { prompt_tokens: 19, completion_tokens: 13, total_tokens: 32 };
    const out = normalize({ choices: [{ index: 0, delta: {}, finish_reason: 'stop', usage }] });
    expect(out.usage).toEqual(usage);
  });
});

describe('applyDialectToRequest: system messages after the first', () => {
  /** The shape Claude Code sends: a system prompt, then system messages inside `messages`. */
  function claudeCodeShape(): MessagesRequest {
    return {
      model: 'claude-test',
      max_tokens: 64,
      system: [{ type: 'text', text: 'You are a coding assistant.' }],
      messages: [
        { role: 'system', content: 'The working directory is /repo.' },
        { role: 'user', content: 'List the files.' },
        { role: 'assistant', content: 'Which folder?' },
        { role: 'system', content: [{ type: 'text', text: 'Plan mode is on.' }] },
        { role: 'user', content: 'The root.' },
      ],
    };
  }

  const folding: Record<DialectName, boolean> = {
    openai: false,
    azure: false,
    vllm: true,
    llamacpp: true,
    ollama: true,
    deepseek: false,
    mistral: false,
    kimi: false,
    groq: false,
    openrouter: false,
    gemini: false,
    vertex: false,
    'openai-generic': true,
  };

  it.each(DIALECT_NAMES.map((name) => [name, folding[name]] as const))(
    '%s: folds them (%s) as its profile says',
    (dialect, folds) => {
      const body = shaped(dialect, claudeCodeShape());
      const roles = body.messages.map((message) => message.role);
      if (!folds) {
        expect(roles).toEqual(['system', 'system', 'user', 'assistant', 'system', 'user']);
        return;
      }
      expect(roles).toEqual(['system', 'user', 'assistant', 'user']);
      expect(body.messages[0]).toEqual({
        role: 'system',
        content: 'You are a coding assistant.\n\nThe working directory is /repo.',
      });
      expect(body.messages[3]).toEqual({
        role: 'user',
        content: '<system-message>\nPlan mode is on.\n</system-message>\n\nThe root.',
      });
    },
  );
});
