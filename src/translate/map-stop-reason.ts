/**
 * Maps a Chat Completions `finish_reason` to a Messages `stop_reason` (docs/protocol.md D.5).
 *
 * @module
 */
import type { StopReason } from '../protocol/messages.js';

/**
 * The Messages `stop_reason` for an upstream `finish_reason`.
 *
 * | `finish_reason`                    | tool calls emitted | `stop_reason` |
 * |------------------------------------|--------------------|---------------|
 * | `length`                           | either             | `max_tokens`  |
 * | `content_filter`                   | either             | `refusal`     |
 * | `tool_calls`, `function_call`      | either             | `tool_use`    |
 * | `stop`, `null`, absent, unknown    | yes                | `tool_use`    |
 * | `stop`                             | no                 | `end_turn`    |
 * | `null`, absent, any unknown value  | no                 | `end_turn`    |
 *
 * Why these rows:
 * - Any emitted tool call means the model waits for a `tool_result`, whatever the server said: Gemini's
 *   OpenAI-compatible streams finish tool turns with `stop` (Part C quirk 6).
 * - `length` wins over tool calls because a call cut off by the token limit may be incomplete and must
 *   not be run; Anthropic itself reports `max_tokens` in that case.
 * - `content_filter` wins over tool calls for the same reason: the turn was stopped, not finished.
 * - `null` or absent: a stream that ended with `[DONE]` but no finish reason ended normally. (A stream
 *   that ended with neither is an error; the stream translator raises it before asking this function.)
 * - Unknown values fall back to `end_turn`, the one reason that promises nothing about the content.
 *   OpenRouter's `error` is not one of them in practice: callers treat `finish_reason: "error"` as an
 *   upstream error (`MODEL_EHTTP`) before mapping, because the content that came with it is incomplete.
 *
 * OpenAI cannot say which stop sequence matched, so `stop_sequence` is never produced (D.5, D.8).
 *
 * @param finishReason the upstream `finish_reason` (any string, `null` or `undefined`)
 * @param sawToolCalls whether the response carried at least one tool call
 *
 * @example
 * mapFinishReason('stop', true)    // → 'tool_use'
 * mapFinishReason('length', false) // → 'max_tokens'
 */
export function mapFinishReason(finishReason: string | null | undefined, sawToolCalls: boolean): StopReason {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'stop':
    case null:
    case undefined:
    default:
      // `stop`, `null`, absent and unknown values alike: the tool calls decide.
      return sawToolCalls ? 'tool_use' : 'end_turn';
  }
}
