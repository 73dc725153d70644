/**
 * Messages requests of an agent at work, built deterministically: a system prompt, a set of tools, the
 * first user prompt, then `turns` turns alternating between the assistant (thinking, a little text, one
 * tool_use) and the user (the matching tool_result). Every tenth result carries an image as well; every
 * seventh is an error. The request always ends with a user turn, as a real one does.
 *
 * | size   | turns after the prompt | tool calls | body      |
 * |--------|------------------------|------------|-----------|
 * | small  | 0 (one user turn)      | 0          | 12 KiB    |
 * | medium | 40                     | 20         | 115 KiB   |
 * | large  | 400                    | 200        | 1.01 MiB  |
 *
 * @module
 */
import type { MessagesRequest } from '../../src/protocol/messages.js';
import { idOf, seededRandom, words } from './random.js';

/** The three conversation sizes every suite uses. */
export type ConversationSize = 'small' | 'medium' | 'large';

export const CONVERSATION_SIZES: readonly ConversationSize[] = ['small', 'medium', 'large'];

const TURNS: Record<ConversationSize, number> = { small: 0, medium: 40, large: 400 };
const TOOL_COUNT = 16;
/** A 1×1 PNG, base64: small, but a real image block. */
const PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** The tool definitions of every generated request. */
function tools(random: () => number): Record<string, unknown>[] {
  return Array.from({ length: TOOL_COUNT }, (_, index) => ({
    name: `tool_${index}`,
    description: words(random, 240),
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: words(random, 60) },
        line: { type: 'integer' },
        content: { type: 'string' },
      },
      required: ['path'],
    },
    ...(index === 0 ? { cache_control: { type: 'ephemeral' } } : {}),
  }));
}

/**
 * The request of the given size, as a plain JSON value. `seed` changes the words, not the shape.
 *
 * @param options.stream sets `stream: true` (the streaming benchmarks) @default false
 */
export function conversation(
  size: ConversationSize,
  options: { seed?: number; stream?: boolean } = {},
): MessagesRequest {
  const random = seededRandom(options.seed ?? 7 + TURNS[size]);
  const messages: Record<string, unknown>[] = [
    {
      role: 'user',
      content: [{ type: 'text', text: words(random, 1200), cache_control: { type: 'ephemeral' } }],
    },
  ];
  let pendingId = '';
  for (let turn = 0; turn < TURNS[size]; turn++) {
    const call = Math.floor(turn / 2);
    if (turn % 2 === 0) {
      pendingId = `toolu_${idOf(random, 22)}`;
      messages.push({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: words(random, 300), signature: idOf(random, 96) },
          { type: 'text', text: words(random, 160) },
          {
            type: 'tool_use',
            id: pendingId,
            name: `tool_${call % TOOL_COUNT}`,
            input: { path: `src/${idOf(random, 12)}.ts`, line: call, content: words(random, 120) },
          },
        ],
      });
      continue;
    }
    const resultText = words(random, 4200);
    const content =
      call % 10 === 9
        ? [
            { type: 'text', text: resultText },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL_PNG } },
          ]
        : resultText;
    messages.push({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: pendingId,
          content,
          ...(call % 7 === 6 ? { is_error: true } : {}),
        },
      ],
    });
  }
  const request: Record<string, unknown> = {
    model: 'claude-sonnet-4-5',
    max_tokens: 8192,
    system: [{ type: 'text', text: words(random, 3000), cache_control: { type: 'ephemeral' } }],
    messages,
    tools: tools(random),
    tool_choice: { type: 'auto' },
    thinking: { type: 'enabled', budget_tokens: 8000 },
    metadata: { user_id: `user_${idOf(random, 16)}` },
    temperature: 1,
  };
  if (options.stream === true) request['stream'] = true;
  return request as unknown as MessagesRequest;
}

/**
 * A one-turn request without tools, for the proxy: the mock models answer it in plain text, so both
 * providers send back the same amount of content.
 */
export function shortPrompt(options: { stream?: boolean } = {}): MessagesRequest {
  const request: Record<string, unknown> = {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    messages: [
      {
        role: 'user',
        content:
          'Summarise the build log below in one sentence and say which test failed first, then suggest the ' +
          'smallest change that would make it pass again without touching the other tests in the suite.',
      },
    ],
  };
  if (options.stream === true) request['stream'] = true;
  return request as unknown as MessagesRequest;
}
