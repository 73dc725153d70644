import { describe, expect, it } from 'vitest';
import { readLlamaCppContextSize, readModelListContextSize } from './read-context-size.js';

describe('readLlamaCppContextSize', () => {
  it('reads default_generation_settings.n_ctx from /props', () => {
    expect(readLlamaCppContextSize({ default_generation_settings: { n_ctx: 4096 }, total_slots: 1 })).toBe(
      4096,
    );
  });

  it('gives undefined for an answer without a usable n_ctx', () => {
    for (const props of [
      null,
      'x',
      {},
      { default_generation_settings: { n_ctx: '4096' } },
      { default_generation_settings: { n_ctx: 0 } },
    ])
      expect(readLlamaCppContextSize(props)).toBeUndefined();
  });
});

describe('readModelListContextSize', () => {
  const list = {
    object: 'list',
    data: [
      { id: 'small', object: 'model', max_model_len: 8192 },
      { id: 'Qwen/Qwen3-8B', object: 'model', max_model_len: 32768 },
    ],
  };

  it("reads the named model's max_model_len, or the first model's", () => {
    expect(readModelListContextSize(list, 'Qwen/Qwen3-8B')).toBe(32768);
    expect(readModelListContextSize(list)).toBe(8192);
  });

  it('gives undefined for a list that does not state it', () => {
    expect(readModelListContextSize(list, 'other')).toBeUndefined();
    expect(readModelListContextSize({ data: [{ id: 'gpt-4o' }] })).toBeUndefined();
    expect(readModelListContextSize({})).toBeUndefined();
  });
});

describe('context sizes that are not whole positive numbers', () => {
  it('reads none from a fraction, zero or a string', () => {
    for (const size of [1.5, 0, '4096']) {
      expect(readLlamaCppContextSize({ default_generation_settings: { n_ctx: size } })).toBeUndefined();
      expect(readModelListContextSize({ data: [{ id: 'm', max_model_len: size }] }, 'm')).toBeUndefined();
    }
  });
});
