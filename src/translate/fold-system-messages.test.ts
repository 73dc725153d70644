import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../protocol/chat-completions.js';
import { foldSystemMessages, systemMessageAsUserText } from './fold-system-messages.js';

const wrapped = systemMessageAsUserText;

describe('foldSystemMessages', () => {
  it('merges the leading system messages into one, joined by a blank line', () => {
    expect(
      foldSystemMessages([
        { role: 'system', content: 'You are terse.' },
        { role: 'system', content: 'Today is Monday.' },
        { role: 'user', content: 'Hi' },
      ]),
    ).toEqual([
      { role: 'system', content: 'You are terse.\n\nToday is Monday.' },
      { role: 'user', content: 'Hi' },
    ]);
  });

  it('carries a later system message into the user message that follows it, keeping its position', () => {
    expect(
      foldSystemMessages([
        { role: 'system', content: 'S' },
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'system', content: 'Plan mode is on.' },
        { role: 'user', content: [{ type: 'text', text: 'three' }] },
      ]),
    ).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      {
        role: 'user',
        content: [
          { type: 'text', text: wrapped('Plan mode is on.') },
          { type: 'text', text: 'three' },
        ],
      },
    ]);
  });

  it('appends a system message that no user message follows to the user message before it', () => {
    expect(
      foldSystemMessages([
        { role: 'user', content: 'one' },
        { role: 'system', content: 'Be brief.' },
      ]),
    ).toEqual([{ role: 'user', content: `one\n\n${wrapped('Be brief.')}` }]);
  });

  it('sends a system message after tool results as a user message of its own', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'system', content: 'Reminder.' },
    ];
    expect(foldSystemMessages(messages)).toEqual([
      ...messages.slice(0, 3),
      { role: 'user', content: wrapped('Reminder.') },
    ]);
  });

  it('leaves a conversation without later system messages unchanged, and drops empty ones', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'system', content: '' },
      { role: 'user', content: 'c' },
    ];
    expect(foldSystemMessages(messages)).toEqual([...messages.slice(0, 3), messages[4]]);
  });

  it('never leaves a system message anywhere but first, nor changes anything before a later one', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'a' },
      { role: 'system', content: 'x' },
      { role: 'assistant', content: 'b' },
      { role: 'system', content: 'y' },
      { role: 'system', content: 'z' },
      { role: 'user', content: '' },
      { role: 'assistant', content: 'c' },
      { role: 'system', content: 'w' },
    ];
    const folded = foldSystemMessages(messages);
    expect(folded.filter((message) => message.role === 'system')).toEqual([]);
    expect(folded.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(folded[0]).toEqual({ role: 'user', content: `a\n\n${wrapped('x')}` });
    expect(folded[2]).toEqual({ role: 'user', content: `${wrapped('y')}\n\n${wrapped('z')}` });
  });
});

describe('foldSystemMessages: developer messages, parts and empty texts', () => {
  it('treats developer messages as system messages, leading and later', () => {
    expect(
      foldSystemMessages([
        { role: 'developer', content: 'D1' },
        { role: 'system', content: 'S1' },
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'developer', content: 'D2' },
        { role: 'user', content: 'three' },
      ] as ChatMessage[]),
    ).toStrictEqual([
      { role: 'system', content: 'D1\n\nS1' },
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: `${wrapped('D2')}\n\nthree` },
    ]);
  });

  it('joins the text parts of a system message with a blank line', () => {
    expect(
      foldSystemMessages([
        {
          role: 'system',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        { role: 'user', content: 'Hi' },
      ] as ChatMessage[]),
    ).toStrictEqual([
      { role: 'system', content: 'a\n\nb' },
      { role: 'user', content: 'Hi' },
    ]);
  });

  it('drops empty system messages, leading and later', () => {
    expect(
      foldSystemMessages([
        { role: 'system', content: '' },
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'system', content: '' },
        { role: 'user', content: 'three' },
      ]),
    ).toStrictEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: 'three' },
    ]);
  });

  it('puts trailing system texts after a user message with parts, or alone joined by a blank line', () => {
    expect(
      foldSystemMessages([
        { role: 'user', content: [{ type: 'text', text: 'one' }] },
        { role: 'system', content: 'late' },
      ]),
    ).toStrictEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: wrapped('late') },
        ],
      },
    ]);
    expect(
      foldSystemMessages([
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'system', content: 'x' },
        { role: 'system', content: 'y' },
      ]),
    ).toStrictEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: `${wrapped('x')}\n\n${wrapped('y')}` },
    ]);
  });

  it('returns messages without system messages as they are', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
    ];
    expect(foldSystemMessages(messages)).toStrictEqual(messages);
    expect(foldSystemMessages([])).toStrictEqual([]);
    expect(foldSystemMessages([{ role: 'system', content: 'only' }])).toStrictEqual([
      { role: 'system', content: 'only' },
    ]);
  });
});
