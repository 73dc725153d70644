import { describe, expect, it } from 'vitest';
import { readContextSize, readModelCatalog } from './read-upstream-catalog.js';

describe('readModelCatalog', () => {
  it("reads ids and each server's context field", () => {
    expect(
      readModelCatalog({
        object: 'list',
        data: [
          { id: 'vllm-model', max_model_len: 32_768 },
          { id: 'openrouter-model', context_length: 200_000 },
          { id: 'lmstudio-model', max_context_length: 8_192 },
          { id: 'plain' },
          { id: 'bad-window', max_model_len: -1 },
          { name: 'no id' },
          'junk',
        ],
      }),
    ).toEqual([
      { id: 'vllm-model', contextWindow: 32_768 },
      { id: 'openrouter-model', contextWindow: 200_000 },
      { id: 'lmstudio-model', contextWindow: 8_192 },
      { id: 'plain' },
      { id: 'bad-window' },
    ]);
  });

  it('is undefined for anything that is not a list', () => {
    expect(readModelCatalog('<html>')).toBeUndefined();
    expect(readModelCatalog({ detail: 'Not Found' })).toBeUndefined();
    expect(readModelCatalog({ data: [] })).toEqual([]);
  });
});

describe('readContextSize', () => {
  it("reads llama.cpp's running context size, not the training one", () => {
    expect(readContextSize({ default_generation_settings: { n_ctx: 4_096 }, n_ctx_train: 131_072 })).toBe(
      4_096,
    );
    expect(readContextSize({ n_ctx: 2_048 })).toBe(2_048);
    expect(readContextSize({ default_generation_settings: {} })).toBeUndefined();
    expect(readContextSize(null)).toBeUndefined();
  });
});
