import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import type { MessageParam } from '../protocol/messages.js';
import { checkPairing, mergeTurns, newToolResultIds } from './check-pairing.js';

const use = (id: string, name = 'tool') => ({ type: 'tool_use', id, name, input: {} }) as const;
const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' }) as const;
const text = (value: string) => ({ type: 'text', text: value }) as const;

/** The message of the `MODEL_EPAIRING` error `checkPairing` throws, or a failure if it throws nothing else. */
function pairingError(messages: MessageParam[]): string {
  try {
    checkPairing(messages);
  } catch (error) {
    if (isTransportError(error) && error.code === 'MODEL_EPAIRING') return error.message;
    throw error;
  }
  throw new Error('checkPairing accepted the history');
}

describe('checkPairing', () => {
  it('accepts a history where every tool_use is answered in the next user turn', () => {
    expect(() =>
      checkPairing([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [text('calling'), use('a'), use('b')] },
        { role: 'user', content: [result('b'), result('a'), text('thanks')] },
        { role: 'assistant', content: 'done' },
        { role: 'user', content: 'more' },
      ]),
    ).not.toThrow();
  });

  it('accepts a history without tools, and an empty one', () => {
    expect(() => checkPairing([{ role: 'user', content: 'hi' }])).not.toThrow();
    expect(() => checkPairing([])).not.toThrow();
  });

  it('merges consecutive same-role messages before pairing', () => {
    expect(() =>
      checkPairing([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a')] },
        { role: 'assistant', content: [use('b')] },
        { role: 'user', content: [result('a')] },
        { role: 'user', content: [result('b')] },
      ]),
    ).not.toThrow();
  });

  it('skips system messages when deciding which turn comes next', () => {
    expect(() =>
      checkPairing([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a'), use('b')] },
        { role: 'system', content: 'be brief' },
        { role: 'system', content: 'really' },
        { role: 'user', content: [result('a'), result('b')] },
        { role: 'system', content: 'still brief' },
        { role: 'user', content: 'go on' },
      ]),
    ).not.toThrow();
  });

  it('refuses answers split across a system message between two user messages', () => {
    expect(
      pairingError([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a'), use('b')] },
        { role: 'user', content: [result('a')] },
        { role: 'system', content: 'note' },
        { role: 'user', content: [result('b')] },
      ]),
    ).toBe(
      'the assistant turn at messages[1] has tool_use "b" with no tool_result in the next user turn (messages[2])',
    );
  });

  it('refuses a tool_use with no tool_result in the next user turn', () => {
    expect(
      pairingError([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a'), use('b')] },
        { role: 'user', content: [result('a')] },
      ]),
    ).toBe(
      'the assistant turn at messages[1] has tool_use "b" with no tool_result in the next user turn (messages[2])',
    );
  });

  it('refuses a tool_use answered only two turns later', () => {
    expect(
      pairingError([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a')] },
        { role: 'user', content: 'wait' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [result('a')] },
      ]),
    ).toBe(
      'the assistant turn at messages[1] has tool_use "a" with no tool_result in the next user turn (messages[2])',
    );
  });

  it('refuses a final assistant turn with tool_use and no user turn after it', () => {
    expect(
      pairingError([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a'), use('b')] },
      ]),
    ).toBe(
      'the assistant turn at messages[1] has tool_use "a", "b" but no user turn follows it with the matching tool_result blocks',
    );
  });

  it('refuses a tool_use followed by another assistant turn across a system message', () => {
    expect(
      pairingError([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a')] },
        { role: 'system', content: 'note' },
        { role: 'assistant', content: 'more' },
        { role: 'user', content: [result('a')] },
      ]),
    ).toBe(
      'the assistant turn at messages[1] has tool_use "a" but is followed by another assistant turn (messages[3]), ' +
        'not by a user turn with the matching tool_result blocks',
    );
  });

  it('refuses a tool_result whose id the preceding assistant turn did not use', () => {
    expect(
      pairingError([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a')] },
        { role: 'user', content: [result('a'), result('zzz')] },
      ]),
    ).toBe(
      'messages[2].content[1]: tool_result for tool_use_id "zzz" has no matching tool_use: the assistant turn at ' +
        'messages[1] has no tool_use with that id',
    );
  });

  it('refuses a tool_result in the first turn', () => {
    expect(pairingError([{ role: 'user', content: [result('a')] }])).toBe(
      'messages[0].content[0]: tool_result for tool_use_id "a" has no matching tool_use: there is no assistant turn right before it',
    );
  });

  it('refuses a tool_result that answers a tool_use of an older assistant turn', () => {
    expect(
      pairingError([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a')] },
        { role: 'user', content: [result('a')] },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [result('a')] },
      ]),
    ).toBe(
      'messages[4].content[0]: tool_result for tool_use_id "a" has no matching tool_use: the assistant turn at ' +
        'messages[3] has no tool_use with that id',
    );
  });

  it('refuses duplicate tool_use ids within one assistant turn', () => {
    expect(
      pairingError([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a')] },
        { role: 'assistant', content: [text('again'), use('a')] },
        { role: 'user', content: [result('a')] },
      ]),
    ).toBe(
      'messages[2].content[1]: tool_use id "a" appears more than once in the assistant turn at messages[1]; tool_use ids must be unique',
    );
  });

  it('refuses duplicate tool_result ids within one user turn', () => {
    expect(
      pairingError([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a')] },
        { role: 'user', content: [result('a')] },
        { role: 'user', content: [result('a')] },
      ]),
    ).toBe(
      'messages[3].content[0]: tool_result for tool_use_id "a" appears more than once in the user turn at messages[2]',
    );
  });

  it('allows the same tool id again in a later, separate exchange', () => {
    expect(() =>
      checkPairing([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('call_0')] },
        { role: 'user', content: [result('call_0')] },
        { role: 'assistant', content: [use('call_0')] },
        { role: 'user', content: [result('call_0')] },
      ]),
    ).not.toThrow();
  });
});

describe('newToolResultIds', () => {
  it('returns the tool_use_ids answered by the last user turn, merged, in order, past trailing system messages', () => {
    expect(
      newToolResultIds([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a'), use('b'), use('c')] },
        { role: 'user', content: [result('c'), text('x')] },
        { role: 'user', content: [result('a'), result('b')] },
        { role: 'system', content: 'note' },
      ]),
    ).toEqual(['c', 'a', 'b']);
  });

  it('ignores tool_result blocks of earlier user turns', () => {
    expect(
      newToolResultIds([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [use('a')] },
        { role: 'user', content: [result('a')] },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'next' },
      ]),
    ).toEqual([]);
  });

  it('returns nothing when the history ends with an assistant turn or is empty', () => {
    expect(
      newToolResultIds([
        { role: 'user', content: [result('a')] },
        { role: 'assistant', content: 'x' },
      ]),
    ).toEqual([]);
    expect(newToolResultIds([])).toEqual([]);
  });
});

describe('mergeTurns', () => {
  it('merges consecutive same-role messages, keeps system messages apart, and records positions', () => {
    expect(
      mergeTurns([
        { role: 'user', content: 'a' },
        { role: 'user', content: [text('b')] },
        { role: 'system', content: 's1' },
        { role: 'system', content: 's2' },
        { role: 'user', content: 'c' },
      ]),
    ).toEqual([
      {
        role: 'user',
        messageIndex: 0,
        blocks: [
          { block: text('a'), messageIndex: 0, blockIndex: undefined },
          { block: text('b'), messageIndex: 1, blockIndex: 0 },
        ],
      },
      {
        role: 'system',
        messageIndex: 2,
        blocks: [{ block: text('s1'), messageIndex: 2, blockIndex: undefined }],
      },
      {
        role: 'system',
        messageIndex: 3,
        blocks: [{ block: text('s2'), messageIndex: 3, blockIndex: undefined }],
      },
      {
        role: 'user',
        messageIndex: 4,
        blocks: [{ block: text('c'), messageIndex: 4, blockIndex: undefined }],
      },
    ]);
  });
});
