import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import type { ThinkingConfig } from '../protocol/messages.js';
import { readEffort, summarizesThinking } from './read-effort.js';

/** The message of the `MODEL_EINVAL` refusal `action` throws. */
function refusal(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    if (isTransportError(error) && error.code === 'MODEL_EINVAL') return error.message;
    throw error;
  }
  throw new Error('expected MODEL_EINVAL');
}

const budget = (tokens: unknown): ThinkingConfig => ({ type: 'enabled', budget_tokens: tokens as number });

describe('readEffort: the thinking config', () => {
  it.each([
    [1024, 'low'],
    [4095, 'low'],
    [4096, 'medium'],
    [16383, 'medium'],
    [16384, 'high'],
    [64000, 'high'],
  ])('reads a thinking budget of %i tokens as effort %s', (tokens, effort) => {
    expect(readEffort(undefined, budget(tokens))).toBe(effort);
  });

  it('reads adaptive thinking as medium effort', () => {
    expect(readEffort(undefined, { type: 'adaptive' })).toBe('medium');
  });

  it('asks for no effort without thinking, for disabled thinking and for thinking types it does not know', () => {
    expect(readEffort(undefined, undefined)).toBeUndefined();
    expect(readEffort(undefined, { type: 'disabled' })).toBeUndefined();
    expect(readEffort(undefined, { type: 'between_tools' })).toBeUndefined();
  });

  it.each([
    ['a string', '8000'],
    ['null', null],
    ['infinite', Number.POSITIVE_INFINITY],
    ['not a number', Number.NaN],
  ])('refuses enabled thinking whose budget_tokens is %s', (_label, tokens) => {
    expect(refusal(() => readEffort(undefined, budget(tokens)))).toBe(
      'thinking.budget_tokens must be a number when thinking.type is "enabled"',
    );
  });
});

describe('readEffort: output_config.effort', () => {
  it.each([
    ['low', 'low'],
    ['medium', 'medium'],
    ['high', 'high'],
    ['xhigh', 'high'],
    ['max', 'high'],
  ])('reads output_config.effort %s as %s, over the thinking budget', (given, effort) => {
    expect(readEffort(given, undefined)).toBe(effort);
    expect(readEffort(given, budget(1024))).toBe(effort);
  });

  it('reads a null effort as absent, so the thinking budget decides', () => {
    expect(readEffort(null, budget(5000))).toBe('medium');
    expect(readEffort(null, undefined)).toBeUndefined();
  });

  it('refuses an unknown effort', () => {
    expect(refusal(() => readEffort('extreme', undefined))).toBe(
      'output_config.effort "extreme" is not one of "low", "medium", "high", "xhigh", "max"',
    );
  });
});

describe('summarizesThinking', () => {
  it('is true for thinking that is on and shown, false otherwise', () => {
    expect(summarizesThinking(budget(1024))).toBe(true);
    expect(summarizesThinking({ type: 'adaptive' })).toBe(true);
    expect(summarizesThinking({ type: 'adaptive', display: 'summarized' })).toBe(true);
    expect(summarizesThinking({ type: 'enabled', budget_tokens: 1024, display: 'omitted' })).toBe(false);
    expect(summarizesThinking({ type: 'disabled' })).toBe(false);
    expect(summarizesThinking(undefined)).toBe(false);
  });
});
