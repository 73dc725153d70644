/**
 * Maps Responses API `usage` to Messages `usage`.
 *
 * @module
 */
import type { Usage } from '../protocol/messages.js';
import type { ResponsesUsage } from '../protocol/responses.js';
import { isObject } from '../protocol/is-object.js';
import { readTokenCount } from './read-token-count.js';

/**
 * The Messages usage for a Responses usage object.
 *
 * | Messages                      | from the Responses API                                                 |
 * |-------------------------------|------------------------------------------------------------------------|
 * | `input_tokens`                | `input_tokens − cached_tokens − cache_write_tokens` (never below 0)    |
 * | `cache_read_input_tokens`     | `input_tokens_details.cached_tokens` ?? 0                              |
 * | `cache_creation_input_tokens` | `input_tokens_details.cache_write_tokens` ?? 0                         |
 * | `output_tokens`               | `output_tokens`, and never less than `output_tokens_details.reasoning_tokens` |
 *
 * As on Chat Completions, OpenAI's `input_tokens` counts cached tokens too, while Anthropic's counts only
 * the uncached rest. OpenAI's `output_tokens` already includes the reasoning tokens, as Anthropic's
 * includes thinking; a server that reports more reasoning tokens than output tokens evidently counted
 * them apart, and the larger number is the honest bill.
 *
 * Missing usage maps to zeros; counts that are not finite numbers read as absent, negative ones as 0,
 * fractions are rounded down.
 *
 * @example
 * mapResponsesUsage({ input_tokens: 540, output_tokens: 60, input_tokens_details: { cached_tokens: 8 } })
 * // → { input_tokens: 532, output_tokens: 60, cache_creation_input_tokens: 0, cache_read_input_tokens: 8 }
 */
export function mapResponsesUsage(usage: ResponsesUsage | null | undefined): Usage {
  const inputDetails = isObject(usage?.input_tokens_details) ? usage.input_tokens_details : undefined;
  const outputDetails = isObject(usage?.output_tokens_details) ? usage.output_tokens_details : undefined;
  const input = readTokenCount(usage?.input_tokens) ?? 0;
  const cacheRead = readTokenCount(inputDetails?.['cached_tokens']) ?? 0;
  const cacheCreation = readTokenCount(inputDetails?.['cache_write_tokens']) ?? 0;
  const output = readTokenCount(usage?.output_tokens) ?? 0;
  const reasoning = readTokenCount(outputDetails?.['reasoning_tokens']) ?? 0;
  return {
    input_tokens: Math.max(0, input - cacheRead - cacheCreation),
    output_tokens: Math.max(output, reasoning),
    cache_creation_input_tokens: cacheCreation,
    cache_read_input_tokens: cacheRead,
  };
}
