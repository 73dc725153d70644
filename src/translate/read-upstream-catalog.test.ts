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

describe('readModelCatalog and readContextSize: values real servers send', () => {
  it('skips entries that are not objects or have an empty or non-string id', () => {
    expect(readModelCatalog({ data: [null, 'qwen3', { id: '' }, { id: 3 }, { id: 'llama' }] })).toStrictEqual(
      [{ id: 'llama' }],
    );
    expect(readModelCatalog(null)).toBeUndefined();
  });

  it('takes only a whole, positive context window, and tries the next field otherwise', () => {
    expect(
      readModelCatalog({
        data: [
          { id: 'a', max_model_len: 0, context_length: 8_192 },
          { id: 'b', max_model_len: 1.5 },
          { id: 'c', context_length: '4096', max_context_length: 2_048 },
          { id: 'd', max_model_len: -1 },
        ],
      }),
    ).toStrictEqual([
      { id: 'a', contextWindow: 8_192 },
      { id: 'b' },
      { id: 'c', contextWindow: 2_048 },
      { id: 'd' },
    ]);
  });

  it('falls back to the top-level n_ctx when the settings have no usable one', () => {
    expect(readContextSize({ default_generation_settings: { n_ctx: 0 }, n_ctx: 2_048 })).toBe(2_048);
    expect(readContextSize({ default_generation_settings: {}, n_ctx: 1_024 })).toBe(1_024);
    expect(readContextSize({ n_ctx: 1.5 })).toBeUndefined();
  });
});
