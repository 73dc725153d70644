/**
 * The token estimate of a request (`estimateInputTokens`) computed without holding the event loop: the
 * BPE's cost grows much faster than its input on a long run of characters with no space in it (150 KB of
 * them took 10–38 s in one call), and a whole conversation of ordinary text takes a noticeable time too.
 * One request's count must not freeze every other exchange of the proxy, its health check included.
 *
 * So the text is counted in slices of at most {@link SLICE_CHARS} characters, every run of
 * non-space characters is broken after {@link MAX_RUN_CHARS} of them (each break can add a token,
 * never remove one: the estimate stays on the high side), and the loop is given back after every
 * {@link YIELD_AFTER_MS} of counting. Past {@link EXACT_BUDGET_MS} of counting for one request, the rest
 * is estimated linearly, at the rate observed so far but never below {@link FLOOR_TOKENS_PER_CHAR}, so
 * a request of any size costs a bounded amount of work.
 *
 * @module
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { estimateInputTokens, type CountTextTokens } from '../translate/estimate-input-tokens.js';

/** Characters counted in one call of the tokenizer. */
export const SLICE_CHARS = 1_024;
/** A run of non-space characters is broken after this many (the BPE's cost on one run is quadratic). */
export const MAX_RUN_CHARS = 64;
/** Counting time after which the loop is given back to other work. */
export const YIELD_AFTER_MS = 8;
/** Counting time per request after which the rest is estimated linearly. */
export const EXACT_BUDGET_MS = 200;
/** The least tokens per character assumed for text not counted (cl100k averages about 0.25 on prose). */
export const FLOOR_TOKENS_PER_CHAR = 0.5;

const LONG_RUN = new RegExp(`(\\S{${MAX_RUN_CHARS}})(?=\\S)`, 'g');

/** Options of {@link estimateInputTokensInSlices}; the defaults are the real clock and the real loop. */
export interface SliceOptions {
  now?: () => number;
  /** Gives the event loop back; resolves when counting may go on. */
  yieldToLoop?: () => Promise<unknown>;
  exactBudgetMs?: number;
}

/**
 * `estimateInputTokens(request, countText)`, counted slice by slice with the loop given back in between,
 * and linear past the time budget.
 */
export async function estimateInputTokensInSlices(
  request: Record<string, unknown>,
  countText: CountTextTokens,
  options: SliceOptions = {},
): Promise<number> {
  const now = options.now ?? (() => performance.now());
  const yieldToLoop = options.yieldToLoop ?? (() => nextTurn());
  const exactBudgetMs = options.exactBudgetMs ?? EXACT_BUDGET_MS;
  // First pass: which texts the estimate counts (the counter is asked for each of them).
  const texts: string[] = [];
  estimateInputTokens(request, (text) => {
    texts.push(text);
    return 0;
  });
  const counts = new Map<string, number>();
  let spentMs = 0;
  let countedChars = 0;
  let countedTokens = 0;
  let sinceYieldMs = 0;
  for (const text of texts) {
    if (counts.has(text)) continue;
    let tokens = 0;
    for (let start = 0; start < text.length; start += SLICE_CHARS) {
      const slice = text.slice(start, start + SLICE_CHARS);
      if (spentMs >= exactBudgetMs) {
        const rate = Math.max(FLOOR_TOKENS_PER_CHAR, countedChars === 0 ? 0 : countedTokens / countedChars);
        tokens += Math.ceil(slice.length * rate);
        continue;
      }
      const startedMs = now();
      const sliceTokens = countText(slice.replace(LONG_RUN, '$1 '));
      const tookMs = now() - startedMs;
      tokens += sliceTokens;
      countedChars += slice.length;
      countedTokens += sliceTokens;
      spentMs += tookMs;
      sinceYieldMs += tookMs;
      if (sinceYieldMs >= YIELD_AFTER_MS) {
        sinceYieldMs = 0;
        await yieldToLoop();
      }
    }
    counts.set(text, tokens);
  }
  // Second pass: the same estimate, with the counts made above.
  return estimateInputTokens(request, (text) => counts.get(text) ?? 0);
}
