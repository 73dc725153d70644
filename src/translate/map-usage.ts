/**
 * Maps Chat Completions `usage` to Messages `usage` (docs/protocol.md D.6).
 *
 * @module
 */
import type { ChatCompletionUsage } from '../protocol/chat-completions.js';
import type { Usage } from '../protocol/messages.js';
import { isObject } from '../protocol/is-object.js';
import { readTokenCount } from './read-token-count.js';

/**
 * The Messages usage for an upstream usage object.
 *
 * | Messages                      | from Chat Completions                                                   |
 * |-------------------------------|-------------------------------------------------------------------------|
 * | `input_tokens`                | `prompt_tokens − cache_read − cache_creation` (never below 0)           |
 * | `cache_read_input_tokens`     | `prompt_tokens_details.cached_tokens` ?? `prompt_cache_hit_tokens` ?? 0 |
 * | `cache_creation_input_tokens` | `prompt_tokens_details.cache_write_tokens` ?? 0                         |
 * | `output_tokens`               | `completion_tokens` (already includes reasoning tokens)                 |
 *
 * OpenAI's `prompt_tokens` counts cached tokens too; Anthropic's `input_tokens` counts only the uncached
 * rest, and total input is `input + cache_read + cache_creation` (A.6). `total_tokens` is ignored: some
 * servers count hidden thinking there only (quirk 21), and adding it would bill tokens no client saw.
 *
 * Missing usage (an interrupted stream, a server that ignores `include_usage`) maps to zeros. Counts that
 * are missing, negative, fractional or not numbers are read as the nearest sane value (0 or rounded down),
 * and counts above `Number.MAX_SAFE_INTEGER` as that bound, so the result is always four non-negative
 * safe integers and `input + cache_read + cache_creation` adds up exactly.
 *
 * @example
 * mapUsage({ prompt_tokens: 339, completion_tokens: 83, prompt_tokens_details: { cached_tokens: 320 } })
 * // → { input_tokens: 19, output_tokens: 83, cache_creation_input_tokens: 0, cache_read_input_tokens: 320 }
 */
export function mapUsage(usage: ChatCompletionUsage | null | undefined): Usage {
  const rawDetails: unknown = usage?.prompt_tokens_details;
  const details = isObject(rawDetails) ? rawDetails : undefined;
  const prompt = readTokenCount(usage?.prompt_tokens) ?? 0;
  const cacheRead =
    readTokenCount(details?.['cached_tokens']) ?? readTokenCount(usage?.prompt_cache_hit_tokens) ?? 0;
  const cacheCreation = readTokenCount(details?.['cache_write_tokens']) ?? 0;
  return {
    input_tokens: Math.max(0, prompt - cacheRead - cacheCreation),
    output_tokens: readTokenCount(usage?.completion_tokens) ?? 0,
    cache_creation_input_tokens: cacheCreation,
    cache_read_input_tokens: cacheRead,
  };
}
