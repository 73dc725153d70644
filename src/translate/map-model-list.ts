/**
 * Maps an OpenAI-compatible model list (`GET {base}/models`) to the Messages list shape
 * (`GET /v1/models`), and builds the one-model list used when the upstream has none.
 *
 * ```text
 * {"object":"list","data":[{"id":"qwen3","object":"model","created":1700000000,"owned_by":"me"}]}
 *   → {"data":[{"type":"model","id":"qwen3","display_name":"qwen3","created_at":"2023-11-14T22:13:20.000Z"}],
 *      "has_more":false,"first_id":"qwen3","last_id":"qwen3"}
 * ```
 *
 * @module
 */

/** One entry of a Messages model list. */
export interface ModelInfo {
  type: 'model';
  id: string;
  display_name: string;
  /** RFC 3339 time; the Unix epoch when the upstream did not say. */
  created_at: string;
}

/** A Messages model list (one page: this proxy never pages). */
export interface ModelList {
  data: ModelInfo[];
  has_more: false;
  first_id: string | null;
  last_id: string | null;
}

const EPOCH = new Date(0).toISOString();

function createdAt(seconds: unknown): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return EPOCH;
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? EPOCH : date.toISOString();
}

/** A list of the given models, in order. */
export function modelList(models: readonly ModelInfo[]): ModelList {
  return {
    data: [...models],
    has_more: false,
    first_id: models[0]?.id ?? null,
    last_id: models[models.length - 1]?.id ?? null,
  };
}

/** A list holding just `model`, or an empty list when no model is configured. */
export function fallbackModelList(model: string | undefined): ModelList {
  return modelList(
    model === undefined ? [] : [{ type: 'model', id: model, display_name: model, created_at: EPOCH }],
  );
}

/**
 * Maps an OpenAI-compatible list. Returns `undefined` when the payload has no usable entry, so the caller
 * can fall back to the configured model. Entries without a string `id` are skipped.
 */
export function mapModelList(payload: unknown): ModelList | undefined {
  const data = (payload as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  const models: ModelInfo[] = [];
  for (const entry of data) {
    const id = (entry as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' || id === '') continue;
    const created = (entry as { created?: unknown }).created;
    models.push({ type: 'model', id, display_name: id, created_at: createdAt(created) });
  }
  return models.length === 0 ? undefined : modelList(models);
}
