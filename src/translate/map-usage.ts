/**
 * Maps Chat Completions `usage` to Messages `usage` (PROTOCOLS.md D.6).
 *
 * @module
 */
import type { ChatCompletionUsage } from '../protocol/chat-completions.js';
import type { Usage } from '../protocol/messages.js';
import { isObject } from '../protocol/is-object.js';

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
 * so the result is always four non-negative integers.
 *
 * @example
 * mapUsage({ prompt_tokens: 339, completion_tokens: 83, prompt_tokens_details: { cached_tokens: 320 } })
 * // → { input_tokens: 19, output_tokens: 83, cache_creation_input_tokens: 0, cache_read_input_tokens: 320 }
 */
export function mapUsage(usage: ChatCompletionUsage | null | undefined): Usage {
  const rawDetails: unknown = usage?.prompt_tokens_details;
  const details = isObject(rawDetails) ? rawDetails : undefined;
  const prompt = count(usage?.prompt_tokens) ?? 0;
  const cacheRead = count(details?.['cached_tokens']) ?? count(usage?.prompt_cache_hit_tokens) ?? 0;
  const cacheCreation = count(details?.['cache_write_tokens']) ?? 0;
  return {
    input_tokens: Math.max(0, prompt - cacheRead - cacheCreation),
    output_tokens: count(usage?.completion_tokens) ?? 0,
    cache_creation_input_tokens: cacheCreation,
    cache_read_input_tokens: cacheRead,
  };
}

/** A token count, or `undefined` when the value is not a finite number. */
function count(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  return Math.max(0, Math.floor(value));
}
