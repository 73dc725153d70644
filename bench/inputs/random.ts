/**
 * Deterministic pseudo-random text for benchmark inputs: the same seed gives the same bytes on every
 * machine and every run, so results are comparable across runs.
 *
 * @module
 */

/** A seeded generator of floats in [0, 1) (xorshift32; quality is irrelevant here, repeatability is not). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 0x9e3779b9;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
}

const VOCABULARY = (
  'function return const value error request response stream token model message tool result file ' +
  'line path test build check index string number object array null true false the a of to in and is ' +
  'for with that this on by from await async import export type interface'
).split(' ');

/** English-looking text of exactly `length` characters (ASCII, words separated by spaces). */
export function words(random: () => number, length: number): string {
  const pieces: string[] = [];
  let size = 0;
  while (size < length) {
    const word = VOCABULARY[Math.floor(random() * VOCABULARY.length)]!;
    pieces.push(word);
    size += word.length + 1;
  }
  return pieces.join(' ').slice(0, length);
}

/** An id of `length` characters from `[a-z0-9]`. */
export function idOf(random: () => number, length: number): string {
  let id = '';
  while (id.length < length) id += Math.floor(random() * 36).toString(36);
  return id;
}
