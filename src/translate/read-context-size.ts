/**
 * The context size a server says it runs with, read from what it publishes. Pure: whoever needs it
 * (an output cap, `tpx doctor`) fetches the document.
 *
 * | server    | document                 | field                                   |
 * |-----------|--------------------------|-----------------------------------------|
 * | llama.cpp | `GET {root}/props`       | `default_generation_settings.n_ctx`     |
 * | vLLM      | `GET {base}/models`      | `data[].max_model_len` of the model     |
 *
 * `{root}` is the base URL without a trailing `/v1` (`serverRootUrl`).
 *
 * @module
 */

import { isObject } from '../protocol/is-object.js';

/** llama.cpp's context size from its `/props` answer, or `undefined` when the answer has none. */
export function readLlamaCppContextSize(props: unknown): number | undefined {
  const settings = isObject(props) ? props['default_generation_settings'] : undefined;
  return positiveInteger(isObject(settings) ? settings['n_ctx'] : undefined);
}

/**
 * A model's context size from an OpenAI-style `/models` list that states it (vLLM's `max_model_len`), or
 * `undefined`. With no `model` given, the first model's.
 */
export function readModelListContextSize(list: unknown, model?: string): number | undefined {
  const data = isObject(list) ? list['data'] : undefined;
  if (!Array.isArray(data)) return undefined;
  const entry: unknown = data.find(
    (candidate: unknown) => model === undefined || (isObject(candidate) && candidate['id'] === model),
  );
  return positiveInteger(isObject(entry) ? entry['max_model_len'] : undefined);
}

function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}
