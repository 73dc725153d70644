/**
 * The `cl100k_base` tokenizer behind the `tpx` provider's token estimates, loaded on first use: its BPE
 * ranks take a few hundred milliseconds to load, which a process that never counts tokens should not
 * pay. It lives here, beside the provider that counts, so that `translate/` stays free of module state
 * and of a dynamic import: the estimate there takes the counting function as an argument.
 *
 * @module
 */
import type { CountTextTokens } from '../translate/estimate-input-tokens.js';

let tokenCounter: Promise<CountTextTokens> | undefined;

/**
 * Loads the `cl100k_base` tokenizer once, on first use. Special-token strings in the text
 * (`<|endoftext|>`) are counted as ordinary text instead of being refused.
 */
export function loadTokenCounter(): Promise<CountTextTokens> {
  tokenCounter ??= import('gpt-tokenizer/encoding/cl100k_base').then((module) => {
    const options = { disallowedSpecial: new Set<string>() };
    return (text: string) => module.countTokens(text, options);
  });
  tokenCounter.catch(() => {
    tokenCounter = undefined; // a failed load may be retried on the next call
  });
  return tokenCounter;
}
