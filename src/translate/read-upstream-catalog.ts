/**
 * Reads what an OpenAI-compatible server says about itself: the model ids of `GET {base}/models`, with
 * each model's context window where the server states one, and llama.cpp's `GET /props` context size.
 *
 * | server     | where the context window is                                        |
 * |------------|--------------------------------------------------------------------|
 * | vLLM       | `max_model_len` on each entry of `/v1/models`                      |
 * | OpenRouter | `context_length` on each entry of `/v1/models`                     |
 * | LM Studio  | `max_context_length` (its `/api/v0/models`; also read if present)  |
 * | llama.cpp  | `default_generation_settings.n_ctx` of `GET /props` (the running context, not `n_ctx_train`) |
 *
 * Pure and lenient: fields that are missing or not positive whole numbers are ignored.
 *
 * @module
 */

import { isObject } from '../protocol/is-object.js';

/** One model the upstream lists. */
export interface CatalogModel {
  id: string;
  /** The context window in tokens, when the server states it. */
  contextWindow?: number;
}

const CONTEXT_FIELDS = ['max_model_len', 'context_length', 'max_context_length'] as const;

function positiveWhole(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

/**
 * The models of an OpenAI-style list (`{"data":[{"id":…},…]}`), or `undefined` when the payload is not
 * one. An empty `data` array is an empty list.
 *
 * @example
 * readModelCatalog({ object: 'list', data: [{ id: 'qwen3', max_model_len: 32768 }] })
 * // → [{ id: 'qwen3', contextWindow: 32768 }]
 */
export function readModelCatalog(payload: unknown): CatalogModel[] | undefined {
  if (!isObject(payload)) return undefined;
  const data = payload['data'];
  if (!Array.isArray(data)) return undefined;
  const models: CatalogModel[] = [];
  for (const entry of data) {
    if (!isObject(entry)) continue;
    const id = entry['id'];
    if (typeof id !== 'string' || id === '') continue;
    const model: CatalogModel = { id };
    for (const field of CONTEXT_FIELDS) {
      const window = positiveWhole(entry[field]);
      if (window !== undefined) {
        model.contextWindow = window;
        break;
      }
    }
    models.push(model);
  }
  return models;
}

/**
 * The running context size from llama.cpp's `/props` (`default_generation_settings.n_ctx`, or a
 * top-level `n_ctx` in older builds), or `undefined`.
 *
 * @example
 * readContextSize({ default_generation_settings: { n_ctx: 4096 } }) // → 4096
 */
export function readContextSize(payload: unknown): number | undefined {
  if (!isObject(payload)) return undefined;
  const settings = payload['default_generation_settings'];
  if (isObject(settings)) {
    const nested = positiveWhole(settings['n_ctx']);
    if (nested !== undefined) return nested;
  }
  return positiveWhole(payload['n_ctx']);
}
