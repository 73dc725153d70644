import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import type { ChatMessage } from '../protocol/chat-completions.js';
import { isMistralToolId, mapMistralToolIds, mistralToolId } from './mistral-tool-ids.js';

function conversation(ids: readonly string[]): ChatMessage[] {
  return [
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: null,
      tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
    },
    ...ids.map((id): ChatMessage => ({ role: 'tool', tool_call_id: id, content: 'ok' })),
  ];
}

describe('mistralToolId', () => {
  it('keeps an id Mistral itself emitted', () => {
    expect(mistralToolId('gSIMJiOkT')).toBe('gSIMJiOkT');
  });

  it.each(['toolu_01Weather', 'call_0fypS1hVX', 'functions.get_weather:0', '', 'tpx_gAbC', 'ünï'])(
    'maps %j to nine letters and digits, the same way every time',
    (id) => {
      const mapped = mistralToolId(id);
      expect(mapped).toMatch(/^[A-Za-z0-9]{9}$/);
      expect(mistralToolId(id)).toBe(mapped);
    },
  );

  it('gives distinct ids distinct stand-ins', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40 }), { minLength: 2, maxLength: 30 }),
        (ids) => {
          const mapped = ids.map(mistralToolId);
          expect(mapped.every(isMistralToolId)).toBe(true);
          expect(new Set(mapped).size).toBe(ids.length);
        },
      ),
    );
  });
});

describe('mapMistralToolIds', () => {
  it('rewrites assistant tool-call ids and tool answers alike, leaving the input unchanged', () => {
    const messages = conversation(['toolu_01Weather', 'gSIMJiOkT']);
    const snapshot = structuredClone(messages);
    const { messages: mapped, idMap } = mapMistralToolIds(messages);
    const sent = mistralToolId('toolu_01Weather');
    expect(idMap).toEqual(
      new Map([
        ['gSIMJiOkT', 'gSIMJiOkT'],
        ['toolu_01Weather', sent],
      ]),
    );
    expect(mapped[1]).toMatchObject({ tool_calls: [{ id: sent }, { id: 'gSIMJiOkT' }] });
    expect(mapped.slice(2)).toEqual([
      { role: 'tool', tool_call_id: sent, content: 'ok' },
      { role: 'tool', tool_call_id: 'gSIMJiOkT', content: 'ok' },
    ]);
    expect(messages).toEqual(snapshot);
  });

  it('refuses with MODEL_EINVAL an id whose stand-in is another id of the conversation', () => {
    const foreign = 'call_from_another_provider';
    const clash = mistralToolId(foreign);
    let thrown: unknown;
    try {
      mapMistralToolIds(conversation([foreign, clash]));
    } catch (error) {
      thrown = error;
    }
    expect(isTransportError(thrown) && thrown.code).toBe('MODEL_EINVAL');
    expect((thrown as Error).message).toContain(foreign);
    expect((thrown as Error).message).toContain(clash);
  });
});

describe('mapMistralToolIds: which id a collision names first', () => {
  const foreign = 'call_from_another_provider';
  const clash = mistralToolId(foreign);

  function refusal(messages: ChatMessage[]): string {
    try {
      mapMistralToolIds(messages);
    } catch (error) {
      if (isTransportError(error) && error.code === 'MODEL_EINVAL') return error.message;
      throw error;
    }
    throw new Error('expected MODEL_EINVAL');
  }

  const expected =
    `the tool-call ids ${JSON.stringify(clash)} and ${JSON.stringify(foreign)} would both reach Mistral as ` +
    `${JSON.stringify(clash)} (Mistral accepts only nine letters and digits); rename one of them`;

  it('names the id Mistral accepts first even when the foreign id comes earlier in the conversation', () => {
    expect(refusal(conversation([foreign, clash]))).toBe(expected);
  });

  it('lets an accepted id that only an assistant turn carries claim itself before any foreign id', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [foreign, clash].map((id) => ({
          id,
          type: 'function' as const,
          function: { name: 'f', arguments: '{}' },
        })),
      },
      { role: 'tool', tool_call_id: foreign, content: 'ok' },
    ];
    expect(refusal(messages)).toBe(expected);
  });

  it('lets an accepted id that only a tool answer carries claim itself before any foreign id', () => {
    const messages: ChatMessage[] = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: foreign, type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: clash, content: 'ok' },
    ];
    expect(refusal(messages)).toBe(expected);
  });
});

describe('mapMistralToolIds: messages without tool calls', () => {
  it('passes plain assistant, user and system messages through as they are', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ];
    const { messages: mapped, idMap } = mapMistralToolIds(messages);
    expect(mapped).toStrictEqual(messages);
    expect(idMap.size).toBe(0);
  });
});
