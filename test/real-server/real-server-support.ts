/**
 * What the real-server tests share: the tools the tiny models call, small readers of messages and
 * streams, and Claude Code's request shape (system messages inside `messages`). The models write random
 * text, so nothing here looks at words: only shapes, ids, pairing, usage and stop reasons.
 *
 * @module
 */
import { expect } from 'vitest';
import type { Message, MessageStreamEvent, ToolUseBlock } from '../../src/protocol/messages.js';
import { createStreamGrammar } from '../../src/protocol/stream-grammar.js';
import { validateMessage, validateStreamEvent } from '../../src/protocol/validate-messages.js';

export const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
    required: ['city', 'unit'],
  },
};

/** A request that makes the model call `get_weather` (llama.cpp constrains the output to a call). */
export function forcedToolRequest(maxTokens: number, extra: Record<string, unknown> = {}) {
  return {
    model: 'tiny',
    max_tokens: maxTokens,
    tools: [weatherTool],
    tool_choice: { type: 'any' as const },
    messages: [{ role: 'user' as const, content: 'What is the weather in Paris and in Rome?' }],
    ...extra,
  };
}

/**
 * Claude Code's first request (2.1.154 and later): a system prompt, and system messages inside
 * `messages` — before the first user message and between turns.
 */
export function claudeCodeShape(extra: Record<string, unknown> = {}) {
  return {
    model: 'tiny',
    max_tokens: 24,
    system: [{ type: 'text' as const, text: 'You are a coding assistant.' }],
    messages: [
      { role: 'system' as const, content: 'The working directory is /repo.' },
      { role: 'user' as const, content: 'List the files.' },
      { role: 'assistant' as const, content: 'Which folder?' },
      { role: 'system' as const, content: [{ type: 'text' as const, text: 'Plan mode is on.' }] },
      { role: 'user' as const, content: 'The root.' },
    ],
    ...extra,
  };
}

export function toolUses(message: Message): ToolUseBlock[] {
  return message.content.filter(
    (block): block is ToolUseBlock => (block as { type: string }).type === 'tool_use',
  );
}

/** Every event of a stream, each checked against the Messages event schema and the event grammar. */
export async function collect(events: AsyncIterable<MessageStreamEvent>): Promise<MessageStreamEvent[]> {
  const grammar = createStreamGrammar();
  const all: MessageStreamEvent[] = [];
  for await (const event of events) {
    const validation = validateStreamEvent(event);
    expect(validation.ok ? undefined : validation.message).toBeUndefined();
    expect(grammar.accept(event)).toBeUndefined();
    all.push(event);
  }
  expect(grammar.end()).toBeUndefined();
  return all;
}

/** Checks a delivered message against the Messages schema and returns it. */
export function validMessage(message: Message): Message {
  const validation = validateMessage(message);
  expect(validation.ok ? undefined : validation.message).toBeUndefined();
  return message;
}

/**
 * Asks the server directly (Chat Completions, the same prompt tpx sends for {@link forcedToolRequest})
 * with growing `max_tokens` until it answers `finish_reason: "length"` inside a tool call's arguments,
 * and returns that `max_tokens`. Bounded: a handful of requests of 20–150 ms each. The server samples
 * with a fixed seed, so the same request gets the same answer through tpx.
 */
export async function findCutToolCall(
  chatBaseUrl: string,
  candidates: readonly number[] = [40, 60, 80, 100, 120, 140, 160],
): Promise<number> {
  const request = forcedToolRequest(0);
  for (const maxTokens of candidates) {
    const response = await fetch(`${chatBaseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: request.model,
        max_tokens: maxTokens,
        messages: request.messages,
        tools: request.tools.map((tool) => ({
          type: 'function',
          function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
        })),
        tool_choice: 'required',
      }),
    });
    const answer = (await response.json()) as {
      choices: { finish_reason: string; message: { tool_calls?: { function: { arguments: string } }[] } }[];
    };
    const choice = answer.choices[0]!;
    const calls = choice.message.tool_calls ?? [];
    if (choice.finish_reason === 'length' && calls.some((call) => !isCompleteJson(call.function.arguments))) {
      return maxTokens;
    }
  }
  throw new Error(`no max_tokens in ${candidates.join(', ')} cut a tool call`);
}

/** Whether text is complete JSON. */
export function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Content blocks with their tool ids masked: the server makes fresh ids for every answer. */
export function withoutIds(message: Message): unknown[] {
  return message.content.map((block) =>
    (block as { type: string }).type === 'tool_use' ? { ...block, id: '<id>' } : block,
  );
}
