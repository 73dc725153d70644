/**
 * `cache_control` per dialect. Anthropic-style prompt caching marks where a cacheable prefix ends;
 * most OpenAI-compatible servers cache prefixes automatically and have no such marker, but OpenRouter
 * takes Anthropic's own `cache_control` on text content parts and at the top level, and passes it to
 * the models that cache explicitly (Anthropic's and Gemini's): openrouter.ai/docs/features/prompt-caching,
 * and the top-level form in OpenRouter's request schema (`AnthropicCacheControlDirective`: "when set at
 * the top level, the system automatically applies cache breakpoints to the last cacheable block").
 *
 * Elsewhere `cache_control` is dropped: OpenAI, DeepSeek, Kimi, Groq, vLLM and llama.cpp cache prefixes
 * on their own, and Gemini's OpenAI-compatible endpoint has no marker. OpenAI's newer explicit
 * breakpoints (`prompt_cache_breakpoint`) exist only for some models, so they are not sent blind.
 *
 * @module
 */
import type { ChatCacheControl } from '../protocol/chat-completions.js';
import type { DialectName, DialectProfile } from './dialects.js';

/** The dialects whose servers take Anthropic's `cache_control` as it is. */
const FORWARDS_CACHE_CONTROL: ReadonlySet<DialectName> = new Set(['openrouter']);

/** Whether `cache_control` goes upstream for this dialect. */
export function forwardsCacheControl(dialect: DialectProfile | undefined): boolean {
  return dialect !== undefined && FORWARDS_CACHE_CONTROL.has(dialect.name);
}

/**
 * The `cache_control` to forward from a block, tool or request: `{type: "ephemeral"}` with its `ttl`
 * when that is `5m` or `1h`; `undefined` for anything else (absent, null, another type).
 */
export function cacheControlOf(holder: unknown): ChatCacheControl | undefined {
  if (typeof holder !== 'object' || holder === null) return undefined;
  const cacheControl: unknown = (holder as Record<string, unknown>)['cache_control'];
  if (typeof cacheControl !== 'object' || cacheControl === null) return undefined;
  const { type, ttl } = cacheControl as Record<string, unknown>;
  if (type !== 'ephemeral') return undefined;
  return ttl === '5m' || ttl === '1h' ? { type, ttl } : { type };
}
