/**
 * How refusals name the upstream: a request refused because of what one server family cannot do says
 * which family, so the reader knows whether another dialect (or the anthropic provider) would serve it.
 *
 * @module
 */
import type { DialectProfile } from './dialects.js';

/**
 * The dialect as refusal messages name it.
 *
 * @example
 * describeDialect(DIALECTS.llamacpp) // → 'llama.cpp server (dialect "llamacpp")'
 * describeDialect(undefined)         // → 'an OpenAI-compatible server'
 */
export function describeDialect(profile: DialectProfile | undefined): string {
  if (profile === undefined) return 'an OpenAI-compatible server';
  return `${profile.label} (dialect ${JSON.stringify(profile.name)})`;
}
