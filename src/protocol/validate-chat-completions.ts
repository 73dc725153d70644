/**
 * Run-time validators for what OpenAI-compatible servers send back. They check only the fields the
 * translator reads, with the looseness real servers need (docs/protocol.md Part C): nulls where the spec says
 * absent, missing `index`/`id`/`type`, arguments as objects, extra keys everywhere.
 *
 * @module
 */
import Type from 'typebox';
import { compileValidator, Count, Maybe } from './compile-checker.js';
import type { ChatCompletionChunk, ChatCompletionResponse } from './chat-completions.js';

const Usage = Type.Object({
  prompt_tokens: Count(),
  completion_tokens: Count(),
  total_tokens: Count(),
  prompt_tokens_details: Maybe(Type.Object({ cached_tokens: Count(), cache_write_tokens: Count() })),
  prompt_cache_hit_tokens: Count(),
});

const ToolCall = Type.Object({
  index: Maybe(Type.Integer()),
  id: Maybe(Type.String()),
  function: Maybe(
    Type.Object({
      name: Maybe(Type.String()),
      arguments: Type.Optional(Type.Unknown()),
    }),
  ),
});

const Message = Type.Object({
  role: Maybe(Type.String()),
  content: Maybe(Type.Union([Type.String(), Type.Array(Type.Unknown())])),
  refusal: Maybe(Type.String()),
  tool_calls: Maybe(Type.Array(ToolCall)),
  reasoning_content: Maybe(Type.String()),
  reasoning: Maybe(Type.String()),
});

const ResponseSchema = Type.Object({
  id: Maybe(Type.String()),
  model: Maybe(Type.String()),
  choices: Type.Array(Type.Object({ message: Message, finish_reason: Maybe(Type.String()) }), {
    minItems: 1,
  }),
  usage: Maybe(Usage),
});

const ChunkSchema = Type.Object({
  choices: Maybe(Type.Array(Type.Object({ delta: Maybe(Message), finish_reason: Maybe(Type.String()) }))),
  usage: Maybe(Usage),
  error: Type.Optional(Type.Unknown()),
});

/** Validates a non-streaming Chat Completions response. */
export const validateChatCompletionResponse = compileValidator<ChatCompletionResponse>(ResponseSchema);

/** Validates one parsed stream chunk. */
export const validateChatCompletionChunk = compileValidator<ChatCompletionChunk>(ChunkSchema);
