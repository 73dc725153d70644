import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import type { ContentBlockParam, MessageParam, MessagesRequest } from '../protocol/messages.js';
import { applyContextEdits, CLEARED_TOOL_RESULT, needsTokenCounter } from './apply-context-edits.js';
import { checkPairing } from './check-pairing.js';

/** One token per character: figures in these tests can be worked out by hand. */
const countCharacters = (text: string) => text.length;

/** A conversation of `count` tool rounds: tool `name_i` called with `{n: i}`, answered `result i`. */
function toolRounds(count: number, name = (index: number) => `tool_${index}`): MessageParam[] {
  const messages: MessageParam[] = [{ role: 'user', content: 'Start' }];
  for (let index = 0; index < count; index++) {
    messages.push(
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: `thought ${index}`, signature: 'sig' },
          { type: 'tool_use', id: `toolu_${index}`, name: name(index), input: { n: index } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `toolu_${index}`, content: `result ${index}` }],
      },
    );
  }
  return messages;
}

function request(messages: MessageParam[], edits: unknown[] | undefined): MessagesRequest {
  const base: MessagesRequest = { model: 'claude-test', max_tokens: 100, messages };
  return edits === undefined ? base : { ...base, context_management: { edits } };
}

function results(messages: readonly MessageParam[]): unknown[] {
  return messages.flatMap((message) =>
    Array.isArray(message.content)
      ? message.content
          .filter((block) => block.type === 'tool_result')
          .map((block) => (block as Record<string, unknown>)['content'])
      : [],
  );
}

function inputs(messages: readonly MessageParam[]): unknown[] {
  return messages.flatMap((message) =>
    Array.isArray(message.content)
      ? message.content
          .filter((block) => block.type === 'tool_use')
          .map((block) => (block as Record<string, unknown>)['input'])
      : [],
  );
}

function refusal(edits: unknown[]): string {
  try {
    applyContextEdits(request(toolRounds(1), edits), countCharacters);
  } catch (error) {
    if (isTransportError(error) && error.code === 'MODEL_EINVAL') return error.message;
    throw error;
  }
  throw new Error('the edits were applied');
}

describe('applyContextEdits: tool uses', () => {
  it('leaves a request without context_management as it is, reporting nothing', () => {
    const original = request(toolRounds(5), undefined);
    expect(applyContextEdits(original, countCharacters)).toEqual({
      request: original,
      appliedEdits: undefined,
    });
  });

  it('does not clear below the default trigger of 100000 input tokens, reporting no applied edit', () => {
    const outcome = applyContextEdits(
      request(toolRounds(5), [{ type: 'clear_tool_uses_20250919' }]),
      countCharacters,
    );
    expect(results(outcome.request.messages)).toEqual([
      'result 0',
      'result 1',
      'result 2',
      'result 3',
      'result 4',
    ]);
    expect(outcome.appliedEdits).toEqual([]);
    expect(outcome.request['context_management']).toBeUndefined();
  });

  it('clears all but the three most recent results once the trigger is passed, keeping pairing', () => {
    const original = request(toolRounds(5), [
      { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 10 } },
    ]);
    const before = structuredClone(original);
    const outcome = applyContextEdits(original, countCharacters);
    expect(original).toEqual(before);
    expect(results(outcome.request.messages)).toEqual([
      CLEARED_TOOL_RESULT,
      CLEARED_TOOL_RESULT,
      'result 2',
      'result 3',
      'result 4',
    ]);
    // Inputs stay unless asked for.
    expect(inputs(outcome.request.messages)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    expect(() => checkPairing(outcome.request.messages)).not.toThrow();
    // "result 0" and "result 1" (8 characters each, ×1.25) give way to two placeholders: never negative.
    expect(outcome.appliedEdits).toEqual([
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 2, cleared_input_tokens: 0 },
    ]);
  });

  it('takes an input-token count the caller made for the trigger', () => {
    const edit = { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 5_000 } };
    const counted = applyContextEdits(request(toolRounds(5), [edit]), countCharacters, {
      inputTokens: 6_000,
    });
    expect(counted.appliedEdits).toEqual([
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 2, cleared_input_tokens: 0 },
    ]);
    const notCounted = applyContextEdits(request(toolRounds(5), [edit]), countCharacters);
    expect(notCounted.appliedEdits).toEqual([]);
  });

  it('counts the tokens a clearing frees', () => {
    const messages = toolRounds(2);
    const big = 'x'.repeat(400);
    (messages[2]!.content as { content: string }[])[0]!.content = big;
    const outcome = applyContextEdits(
      request(messages, [
        {
          type: 'clear_tool_uses_20250919',
          trigger: { type: 'tool_uses', value: 1 },
          keep: { type: 'tool_uses', value: 1 },
        },
      ]),
      countCharacters,
    );
    // 400 characters × 1.25 = 500, less the placeholder's 47 × 1.25 = 58.75 → 500 − 59 = 441.
    const placeholder = Math.ceil(CLEARED_TOOL_RESULT.length * 1.25);
    expect(outcome.appliedEdits).toEqual([
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: 500 - placeholder },
    ]);
  });

  it('triggers on a count of tool uses, and keeps the number asked for', () => {
    const outcome = applyContextEdits(
      request(toolRounds(4), [
        {
          type: 'clear_tool_uses_20250919',
          trigger: { type: 'tool_uses', value: 3 },
          keep: { type: 'tool_uses', value: 1 },
        },
      ]),
      countCharacters,
    );
    expect(results(outcome.request.messages)).toEqual([
      CLEARED_TOOL_RESULT,
      CLEARED_TOOL_RESULT,
      CLEARED_TOOL_RESULT,
      'result 3',
    ]);
  });

  it('does not trigger on exactly as many tool uses as the trigger value', () => {
    const outcome = applyContextEdits(
      request(toolRounds(3), [
        {
          type: 'clear_tool_uses_20250919',
          trigger: { type: 'tool_uses', value: 3 },
          keep: { type: 'tool_uses', value: 0 },
        },
      ]),
      countCharacters,
    );
    expect(outcome.appliedEdits).toEqual([]);
  });

  it('never clears the uses of excluded tools', () => {
    const outcome = applyContextEdits(
      request(
        toolRounds(4, (index) => (index === 0 ? 'memory' : 'search')),
        [
          {
            type: 'clear_tool_uses_20250919',
            trigger: { type: 'tool_uses', value: 0 },
            keep: { type: 'tool_uses', value: 1 },
            exclude_tools: ['memory'],
          },
        ],
      ),
      countCharacters,
    );
    expect(results(outcome.request.messages)).toEqual([
      'result 0',
      CLEARED_TOOL_RESULT,
      CLEARED_TOOL_RESULT,
      'result 3',
    ]);
  });

  it('clears the inputs too with clear_tool_inputs true, or only those of the named tools', () => {
    const edit = {
      type: 'clear_tool_uses_20250919',
      trigger: { type: 'tool_uses', value: 0 },
      keep: { type: 'tool_uses', value: 1 },
    };
    const all = applyContextEdits(
      request(toolRounds(3), [{ ...edit, clear_tool_inputs: true }]),
      countCharacters,
    );
    expect(inputs(all.request.messages)).toEqual([{}, {}, { n: 2 }]);
    const named = applyContextEdits(
      request(toolRounds(3), [{ ...edit, clear_tool_inputs: ['tool_1'] }]),
      countCharacters,
    );
    expect(inputs(named.request.messages)).toEqual([{ n: 0 }, {}, { n: 2 }]);
  });

  it('clears nothing when it would free fewer tokens than clear_at_least', () => {
    const edit = {
      type: 'clear_tool_uses_20250919',
      trigger: { type: 'tool_uses', value: 0 },
      keep: { type: 'tool_uses', value: 0 },
      clear_tool_inputs: true,
      clear_at_least: { type: 'input_tokens', value: 1_000 },
    };
    const outcome = applyContextEdits(request(toolRounds(3), [edit]), countCharacters);
    expect(results(outcome.request.messages)).toEqual(['result 0', 'result 1', 'result 2']);
    expect(outcome.appliedEdits).toEqual([]);
  });

  it('clears results given as blocks, and counts them', () => {
    const messages = toolRounds(2);
    (messages[2]!.content as { content: unknown }[])[0]!.content = [{ type: 'text', text: 'y'.repeat(800) }];
    const outcome = applyContextEdits(
      request(messages, [
        {
          type: 'clear_tool_uses_20250919',
          trigger: { type: 'tool_uses', value: 0 },
          keep: { type: 'tool_uses', value: 1 },
        },
      ]),
      countCharacters,
    );
    expect(results(outcome.request.messages)[0]).toBe(CLEARED_TOOL_RESULT);
    expect(outcome.appliedEdits?.[0]).toMatchObject({
      cleared_tool_uses: 1,
      cleared_input_tokens: 1000 - 59,
    });
  });
});

describe('applyContextEdits: thinking', () => {
  function thinkingOf(messages: readonly MessageParam[]): string[] {
    return messages.flatMap((message) =>
      Array.isArray(message.content)
        ? message.content
            .filter((block) => block.type === 'thinking')
            .map((block) => String((block as Record<string, unknown>)['thinking']))
        : [],
    );
  }

  it('keeps the thinking of the last assistant turn by default', () => {
    const outcome = applyContextEdits(
      request(toolRounds(3), [{ type: 'clear_thinking_20251015' }]),
      countCharacters,
    );
    expect(thinkingOf(outcome.request.messages)).toEqual(['thought 2']);
    // "thought 0" and "thought 1": 9 characters each × 1.25, rounded up once.
    expect(outcome.appliedEdits).toEqual([
      { type: 'clear_thinking_20251015', cleared_thinking_turns: 2, cleared_input_tokens: 23 },
    ]);
    // The tool calls stay where they were.
    expect(inputs(outcome.request.messages)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
  });

  it('keeps as many thinking turns as asked, and all of them with "all"', () => {
    const two = applyContextEdits(
      request(toolRounds(3), [
        { type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 2 } },
      ]),
      countCharacters,
    );
    expect(thinkingOf(two.request.messages)).toEqual(['thought 1', 'thought 2']);
    const all = applyContextEdits(
      request(toolRounds(3), [{ type: 'clear_thinking_20251015', keep: 'all' }]),
      countCharacters,
    );
    expect(thinkingOf(all.request.messages)).toEqual(['thought 0', 'thought 1', 'thought 2']);
    expect(all.appliedEdits).toEqual([]);
  });

  it('applies both edits in order and reports each', () => {
    const outcome = applyContextEdits(
      request(toolRounds(4), [
        { type: 'clear_thinking_20251015' },
        { type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 0 } },
      ]),
      countCharacters,
    );
    expect(outcome.appliedEdits?.map((edit) => edit.type)).toEqual([
      'clear_thinking_20251015',
      'clear_tool_uses_20250919',
    ]);
    expect(thinkingOf(outcome.request.messages)).toEqual(['thought 3']);
    expect(results(outcome.request.messages)[0]).toBe(CLEARED_TOOL_RESULT);
  });
});

describe('applyContextEdits: what it refuses', () => {
  it('refuses a compaction edit, naming it', () => {
    expect(refusal([{ type: 'compact_20260112' }])).toBe(
      'context_management.edits[0] has type "compact_20260112": compaction asks the model for a summary on ' +
        "Anthropic's side, which the tpx provider cannot do within one exchange; remove it " +
        '(clear_tool_uses_20250919 and clear_thinking_20251015 are applied locally), or use the anthropic provider',
    );
  });

  it('refuses an unknown edit type, naming it and its position', () => {
    expect(refusal([{ type: 'clear_thinking_20251015' }, { type: 'clear_everything_20990101' }])).toBe(
      'context_management.edits[1] has type "clear_everything_20990101", which the tpx provider cannot apply; ' +
        'it applies clear_tool_uses_20250919 and clear_thinking_20251015',
    );
  });

  it('refuses thinking clearing listed after tool-use clearing', () => {
    expect(refusal([{ type: 'clear_tool_uses_20250919' }, { type: 'clear_thinking_20251015' }])).toBe(
      'context_management.edits[1]: clear_thinking_20251015 must come before clear_tool_uses_20250919 in ' +
        'context_management.edits',
    );
  });

  it('refuses a malformed option, naming it', () => {
    expect(refusal([{ type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: -1 } }])).toBe(
      'context_management.edits[0].keep must be {"type": "tool_uses", "value": a non-negative integer}',
    );
  });

  it('needs a token counter only for tool-use clearing', () => {
    expect(needsTokenCounter(request(toolRounds(1), [{ type: 'clear_thinking_20251015' }]))).toBe(false);
    expect(needsTokenCounter(request(toolRounds(1), [{ type: 'clear_tool_uses_20250919' }]))).toBe(true);
    expect(needsTokenCounter(request(toolRounds(1), undefined))).toBe(false);
    expect(needsTokenCounter({ ...request(toolRounds(1), undefined), context_management: null })).toBe(false);
    expect(needsTokenCounter({ ...request(toolRounds(1), undefined), context_management: {} })).toBe(false);
  });
});

describe('applyContextEdits: context_management shapes', () => {
  it('treats a null context_management as none, returning the request itself', () => {
    const original: MessagesRequest = { ...request(toolRounds(1), undefined), context_management: null };
    const outcome = applyContextEdits(original, countCharacters);
    expect(outcome.request).toBe(original);
    expect(outcome.appliedEdits).toBeUndefined();
  });

  it('applies nothing, and reports an empty list, for context_management without edits', () => {
    for (const contextManagement of [{}, { edits: null }, { edits: [] }]) {
      const outcome = applyContextEdits(
        { ...request(toolRounds(1), undefined), context_management: contextManagement },
        countCharacters,
      );
      expect(outcome.appliedEdits).toStrictEqual([]);
      expect(outcome.request).toStrictEqual(request(toolRounds(1), undefined));
    }
  });

  it('refuses a context_management, edit list or edit of the wrong shape, naming it', () => {
    const refusalOf = (contextManagement: unknown): string => {
      try {
        applyContextEdits(
          { ...request(toolRounds(1), undefined), context_management: contextManagement },
          countCharacters,
        );
      } catch (error) {
        if (isTransportError(error) && error.code === 'MODEL_EINVAL' && error.status === 400)
          return error.message;
        throw error;
      }
      throw new Error('the edits were applied');
    };
    expect(refusalOf('clear')).toBe('context_management must be an object');
    expect(refusalOf({ edits: { type: 'clear_thinking_20251015' } })).toBe(
      'context_management.edits must be an array',
    );
    expect(refusalOf({ edits: [{ type: 'clear_thinking_20251015' }, 'clear'] })).toBe(
      'context_management.edits[1] must be an object',
    );
  });

  it('accepts thinking clearing twice in a row', () => {
    const outcome = applyContextEdits(
      request(toolRounds(3), [{ type: 'clear_thinking_20251015' }, { type: 'clear_thinking_20251015' }]),
      countCharacters,
    );
    expect(outcome.appliedEdits?.map((edit) => edit.type)).toStrictEqual(['clear_thinking_20251015']);
  });

  it("uses the caller's input-token count only while the messages are the ones it counted", () => {
    const edits = [
      { type: 'clear_thinking_20251015' },
      { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 5_000 } },
    ];
    // The thinking edit changed the messages: the caller's count (of the original) no longer applies,
    // and the estimate of what is left is below the trigger.
    const outcome = applyContextEdits(request(toolRounds(5), edits), countCharacters, {
      inputTokens: 1_000_000,
    });
    expect(outcome.appliedEdits?.map((edit) => edit.type)).toStrictEqual(['clear_thinking_20251015']);
  });
});

describe('applyContextEdits: clear_tool_inputs and exclude_tools', () => {
  it('keeps the inputs with clear_tool_inputs false or null', () => {
    for (const clearInputs of [false, null]) {
      const outcome = applyContextEdits(
        request(toolRounds(4), [
          {
            type: 'clear_tool_uses_20250919',
            trigger: { type: 'tool_uses', value: 0 },
            clear_tool_inputs: clearInputs,
          },
        ]),
        countCharacters,
      );
      expect(inputs(outcome.request.messages)).toStrictEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }]);
      expect(results(outcome.request.messages)[0]).toBe(CLEARED_TOOL_RESULT);
    }
  });

  it('refuses a clear_tool_inputs that is not a boolean or a list of names, and lists holding other things', () => {
    const edit = (fields: Record<string, unknown>) => [
      {
        type: 'clear_tool_uses_20250919',
        trigger: { type: 'tool_uses', value: 0 },
        keep: { type: 'tool_uses', value: 0 },
        ...fields,
      },
    ];
    expect(refusal(edit({ clear_tool_inputs: 'yes' }))).toBe(
      'context_management.edits[0].clear_tool_inputs must be a boolean or an array of tool names',
    );
    expect(refusal(edit({ clear_tool_inputs: ['tool_0', 3] }))).toBe(
      'context_management.edits[0].clear_tool_inputs must be an array of tool names',
    );
    expect(refusal(edit({ exclude_tools: 'tool_0' }))).toBe(
      'context_management.edits[0].exclude_tools must be an array of tool names',
    );
  });

  it('counts a result without content as empty text when clearing it', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'Start' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_0', name: 'tool_0', input: { text: 'y'.repeat(300) } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
      { role: 'user', content: 'next' },
    ];
    const outcome = applyContextEdits(
      request(messages, [
        {
          type: 'clear_tool_uses_20250919',
          trigger: { type: 'tool_uses', value: 0 },
          keep: { type: 'tool_uses', value: 0 },
          clear_tool_inputs: true,
        },
      ]),
      countCharacters,
    );
    const emptyResult = applyContextEdits(
      request(
        messages.map((message, index) =>
          index === 2
            ? { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: '' }] }
            : message,
        ),
        [
          {
            type: 'clear_tool_uses_20250919',
            trigger: { type: 'tool_uses', value: 0 },
            keep: { type: 'tool_uses', value: 0 },
            clear_tool_inputs: true,
          },
        ],
      ),
      countCharacters,
    );
    expect(outcome.appliedEdits).toStrictEqual(emptyResult.appliedEdits);
    expect(outcome.appliedEdits).toHaveLength(1);
    expect(outcome.appliedEdits?.[0]).toMatchObject({ cleared_tool_uses: 1 });
    expect(outcome.appliedEdits?.[0]?.cleared_input_tokens).toBeGreaterThan(0);
  });
});

/** A content entry that is not a block at all. */
const JUNK_BLOCK = 'junk' as unknown as ContentBlockParam;

/** `toolRounds(count)` with every result `size` characters long. */
function bigRounds(count: number, size: number): MessageParam[] {
  return toolRounds(count).map((message) =>
    Array.isArray(message.content) && message.content[0]?.type === 'tool_result'
      ? { ...message, content: [{ ...message.content[0], content: 'r'.repeat(size) }] }
      : message,
  );
}

const clearAll = (fields: Record<string, unknown> = {}) => ({
  type: 'clear_tool_uses_20250919',
  trigger: { type: 'tool_uses', value: 0 },
  keep: { type: 'tool_uses', value: 0 },
  ...fields,
});

describe('applyContextEdits: what tool-use clearing counts', () => {
  it('counts the results and, when asked, the inputs it clears, less the placeholders it leaves', () => {
    // One token per character, ×1.25: two results of 400 characters are 1000 tokens, their inputs
    // ({"n":0}, {"n":1}: 14 characters) 18 more (ceil of 1017.5), two placeholders of 47 characters 118.
    const withInputs = applyContextEdits(
      request(bigRounds(2, 400), [clearAll({ clear_tool_inputs: true })]),
      countCharacters,
    );
    expect(withInputs.appliedEdits).toStrictEqual([
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 2, cleared_input_tokens: 900 },
    ]);
    expect(inputs(withInputs.request.messages)).toStrictEqual([{}, {}]);
    const resultsOnly = applyContextEdits(request(bigRounds(2, 400), [clearAll()]), countCharacters);
    expect(resultsOnly.appliedEdits).toStrictEqual([
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 2, cleared_input_tokens: 882 },
    ]);
  });

  it('clears the input of a call nobody answered, leaving no placeholder', () => {
    const answer: MessageParam = { role: 'user', content: [{ type: 'text', text: 'no answer' }] };
    const messages: MessageParam[] = [
      { role: 'user', content: 'Start' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'a', name: 't', input: { text: 'y'.repeat(200) } }],
      },
      answer,
    ];
    const outcome = applyContextEdits(
      request(messages, [clearAll({ clear_tool_inputs: true })]),
      countCharacters,
    );
    // {"text":"y…y"} is 211 characters: 264 tokens, and nothing comes in its place.
    expect(outcome.appliedEdits).toStrictEqual([
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: 264 },
    ]);
    expect(inputs(outcome.request.messages)).toStrictEqual([{}]);
    expect(outcome.request.messages[2]).toBe(answer);
  });

  it('leaves the messages it does not touch as they were', () => {
    const messages = bigRounds(2, 10);
    const outcome = applyContextEdits(
      request(messages, [clearAll({ keep: { type: 'tool_uses', value: 1 } })]),
      countCharacters,
    );
    expect(outcome.request.messages[0]).toBe(messages[0]);
    expect(outcome.request.messages[1]).toBe(messages[1]);
    expect(outcome.request.messages[3]).toBe(messages[3]);
    expect(outcome.request.messages[4]).toBe(messages[4]);
    expect(outcome.request.messages[2]).not.toBe(messages[2]);
  });

  it('triggers on the default of 100000 input tokens once the conversation is over it', () => {
    const messages = bigRounds(4, 10);
    (messages[2]!.content as { content: string }[])[0]!.content = 'x'.repeat(80_000);
    const outcome = applyContextEdits(
      request(messages, [{ type: 'clear_tool_uses_20250919' }]),
      countCharacters,
    );
    expect(
      outcome.appliedEdits?.map((edit) => edit.type === 'clear_tool_uses_20250919' && edit.cleared_tool_uses),
    ).toStrictEqual([1]);
  });

  it('does not trigger on exactly as many input tokens as the trigger value', () => {
    const edit = { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 5_000 } };
    expect(
      applyContextEdits(request(toolRounds(5), [edit]), countCharacters, { inputTokens: 5_000 }).appliedEdits,
    ).toStrictEqual([]);
    expect(
      applyContextEdits(request(toolRounds(5), [edit]), countCharacters, { inputTokens: 5_001 }).appliedEdits,
    ).toHaveLength(1);
  });

  it('does not count a result the caller already sends cleared', () => {
    const messages = bigRounds(2, 400);
    (messages[2]!.content as { content: string }[])[0]!.content = CLEARED_TOOL_RESULT;
    const outcome = applyContextEdits(request(messages, [clearAll()]), countCharacters);
    // One result of 400 characters (500 tokens) less one placeholder (59).
    expect(outcome.appliedEdits).toStrictEqual([
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: 441 },
    ]);
  });

  it('reports nothing when every candidate is excluded', () => {
    const original = request(toolRounds(2), [clearAll({ exclude_tools: ['tool_0', 'tool_1'] })]);
    const outcome = applyContextEdits(original, countCharacters);
    expect(outcome.appliedEdits).toStrictEqual([]);
    expect(outcome.request.messages).toBe(original.messages);
  });

  it('takes tool uses only from assistant messages and their first result only from user messages', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'Start' },
      {
        role: 'assistant',
        content: [
          JUNK_BLOCK,
          { type: 'tool_use', id: 'a', name: 't', input: {} },
          { type: 'tool_result', tool_use_id: 'a', content: 'in the assistant message' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: 'first' },
          { type: 'tool_result', tool_use_id: 'a', content: 'second' },
          { type: 'tool_use', id: 'b', name: 't', input: {} },
        ],
      },
    ];
    const outcome = applyContextEdits(request(messages, [clearAll()]), countCharacters);
    expect(outcome.appliedEdits).toStrictEqual([
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: 0 },
    ]);
    expect(results(outcome.request.messages)).toStrictEqual([
      'in the assistant message',
      CLEARED_TOOL_RESULT,
      'second',
    ]);
  });

  it('refuses a malformed trigger, keep or clear_at_least, naming the types it takes', () => {
    const message =
      'context_management.edits[0].trigger must be {"type": "input_tokens" or "tool_uses", "value": a non-negative integer}';
    for (const trigger of [
      'x',
      { type: 'seconds', value: 3 },
      { type: 'tool_uses', value: '3' },
      { type: 'tool_uses', value: 1.5 },
      { type: 'tool_uses', value: -1 },
      { type: 'tool_uses' },
    ]) {
      expect(refusal([{ type: 'clear_tool_uses_20250919', trigger }])).toBe(message);
    }
    expect(
      refusal([{ type: 'clear_tool_uses_20250919', clear_at_least: { type: 'tool_uses', value: 1 } }]),
    ).toBe(
      'context_management.edits[0].clear_at_least must be {"type": "input_tokens", "value": a non-negative integer}',
    );
    expect(refusal([{ type: 'clear_thinking_20251015', keep: { type: 'tool_uses', value: 1 } }])).toBe(
      'context_management.edits[0].keep must be {"type": "thinking_turns", "value": a non-negative integer}',
    );
  });

  it('takes a null option as its default', () => {
    const outcome = applyContextEdits(
      request(toolRounds(5), [{ ...clearAll(), keep: null, clear_at_least: null, exclude_tools: null }]),
      countCharacters,
    );
    expect(results(outcome.request.messages)).toStrictEqual([
      CLEARED_TOOL_RESULT,
      CLEARED_TOOL_RESULT,
      'result 2',
      'result 3',
      'result 4',
    ]);
  });
});

describe('applyContextEdits: what thinking clearing counts', () => {
  const turns: MessageParam[] = [
    { role: 'user', content: 'Start' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'abcd', signature: 's' },
        { type: 'text', text: 'a' },
      ],
    },
    { role: 'user', content: 'next' },
    {
      role: 'assistant',
      content: [
        { type: 'redacted_thinking', data: 'xxxxxxxx' },
        { type: 'text', text: 'b' },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'thinking', thinking: 'zz', signature: 's' },
        { type: 'text', text: 'u' },
      ],
    },
    { role: 'assistant', content: 'plain' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'last', signature: 's' },
        { type: 'text', text: 'c' },
      ],
    },
    { role: 'user', content: 'end' },
  ];

  it('clears thinking and redacted thinking of assistant turns only, and counts what it removed', () => {
    const outcome = applyContextEdits(request(turns, [{ type: 'clear_thinking_20251015' }]), countCharacters);
    // "abcd" is 5 tokens (4 × 1.25), 8 characters of redacted data 2.
    expect(outcome.appliedEdits).toStrictEqual([
      { type: 'clear_thinking_20251015', cleared_thinking_turns: 2, cleared_input_tokens: 7 },
    ]);
    expect(outcome.request.messages[1]?.content).toStrictEqual([{ type: 'text', text: 'a' }]);
    expect(outcome.request.messages[3]?.content).toStrictEqual([{ type: 'text', text: 'b' }]);
    expect(outcome.request.messages[4]).toBe(turns[4]);
    expect(outcome.request.messages[6]).toBe(turns[6]);
  });

  it('reports nothing when no more turns have thinking than it keeps', () => {
    const outcome = applyContextEdits(
      request(turns, [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 3 } }]),
      countCharacters,
    );
    expect(outcome.appliedEdits).toStrictEqual([]);
    expect(outcome.request.messages).toBe(turns);
  });
});
