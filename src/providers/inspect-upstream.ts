/**
 * Asking an upstream what it serves: `GET {base}/models` read as a model list (with each model's
 * context window where stated), and for llama.cpp-like servers `GET /props` for the running context
 * size. Used by the transport to map models and cap output, and by `tpx doctor` to tell a wrong URL from
 * a wrong model.
 *
 * @module
 */
import { isTransportError } from '../errors.js';
import { readContextSize, readModelCatalog } from '../translate/read-upstream-catalog.js';
import { isObject } from '../protocol/is-object.js';
import type { ServerKind, UpstreamReport } from './exchange-types.js';
import { readBody, type AttemptContext, type HttpResponse } from './http-exchange.js';
import { ERROR_BODY_LIMIT } from './upstream-answer.js';

/** Sends one GET with the provider's credentials; rejects with a `TransportError`. */
export type AuthorizedGet = (url: string) => Promise<HttpResponse>;

/** A model list can be long (OpenRouter lists hundreds); anything beyond this is not a list we need. */
const MODEL_LIST_LIMIT = ERROR_BODY_LIMIT * 64;

function parseLoose(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** How a body that should have been a JSON model list looked instead. */
function describeNotAList(contentType: string, text: string): string {
  const start = text.trimStart().slice(0, 15).toLowerCase();
  if (contentType.includes('html') || start.startsWith('<!doctype') || start.startsWith('<html')) {
    return `answered with an HTML page (${contentType || 'no content type'}), not a JSON model list`;
  }
  if (parseLoose(text) === undefined) {
    return `answered ${contentType || 'no content type'} that is not JSON: ${JSON.stringify(text.slice(0, 80))}`;
  }
  return `answered JSON that is not a model list (no "data" array): ${JSON.stringify(text.slice(0, 80))}`;
}

/**
 * Inspects an OpenAI-compatible upstream. `propsUrl` is asked only when given (llama.cpp-like servers);
 * its failure is ignored. With `detectServer`, the kind of server is read from what it says of itself:
 * `owned_by` on the list's entries (vLLM, llama.cpp), llama.cpp's `/props`, Ollama's `/api/version`, LM
 * Studio's `/api/v0/models`.
 *
 * @throws TransportError when the model list cannot be fetched at all (connection refused, deadline,
 * credentials refused): the upstream is not there or not ours to use.
 */
export async function inspectOpenAiUpstream(
  get: AuthorizedGet,
  context: AttemptContext,
  urls: { modelsUrl: string; propsUrl?: string | undefined; detectServer?: boolean },
): Promise<UpstreamReport> {
  const response = await get(urls.modelsUrl);
  const contentType = response.headers['content-type'] ?? '';
  const text = await readBody(response, context, MODEL_LIST_LIMIT).catch((error: unknown) => {
    if (context.cancellation.aborted) throw error;
    return '';
  });
  const report: {
    -readonly [K in keyof UpstreamReport]: UpstreamReport[K];
  } = { modelsUrl: urls.modelsUrl, modelsStatus: response.status, modelsContentType: contentType };
  if (response.status < 200 || response.status > 299) {
    report.problem = `answered ${response.status}${contentType.includes('html') ? ' with an HTML page' : ''}`;
  } else {
    const payload = parseLoose(text);
    const models = readModelCatalog(payload);
    if (models === undefined) report.problem = describeNotAList(contentType, text);
    else report.models = models;
    const owner = urls.detectServer === true ? serverOwning(payload) : undefined;
    if (owner !== undefined) report.server = { kind: owner, source: urls.modelsUrl };
  }
  if (urls.propsUrl !== undefined && report.models !== undefined) {
    const props = await askQuietly(get, context, urls.propsUrl);
    const tokens = readContextSize(props);
    if (tokens !== undefined) report.contextWindow = { tokens, source: urls.propsUrl };
    if (urls.detectServer === true && report.server === undefined && isObject(props)) {
      if (isObject(props['default_generation_settings'])) {
        report.server = { kind: 'llamacpp', source: urls.propsUrl };
      }
    }
  }
  if (urls.detectServer === true && report.server === undefined && report.models !== undefined) {
    const server = await askOwnApis(get, context, urls.modelsUrl);
    if (server !== undefined) report.server = server;
  }
  return report;
}

/** The server named by `owned_by` on a model list's entries (vLLM: `vllm`, llama.cpp: `llamacpp`). */
function serverOwning(payload: unknown): ServerKind | undefined {
  const data = isObject(payload) ? payload['data'] : undefined;
  if (!Array.isArray(data)) return undefined;
  for (const entry of data) {
    const owner = isObject(entry) ? entry['owned_by'] : undefined;
    if (owner === 'vllm') return 'vllm';
    if (owner === 'llamacpp') return 'llamacpp';
  }
  return undefined;
}

/** A GET's JSON answer when it is a 200, else `undefined`; only a cancel ends the inspection. */
async function askQuietly(get: AuthorizedGet, context: AttemptContext, url: string): Promise<unknown> {
  try {
    const response = await get(url);
    const text = await readBody(response, context, ERROR_BODY_LIMIT);
    return response.status === 200 ? parseLoose(text) : undefined;
  } catch (error) {
    // A server without the endpoint simply does not say; only a cancel ends the inspection.
    if (context.cancellation.aborted && isTransportError(error)) throw error;
    return undefined;
  }
}

/**
 * Ollama and LM Studio by their own APIs beside the OpenAI-compatible one: Ollama's `GET /api/version`
 * (`{"version":"0.12.3"}`), LM Studio's `GET /api/v0/models` (a `data` list whose entries have a `type`).
 */
async function askOwnApis(
  get: AuthorizedGet,
  context: AttemptContext,
  modelsUrl: string,
): Promise<UpstreamReport['server']> {
  const root = rootOf(modelsUrl);
  const version = await askQuietly(get, context, `${root}/api/version`);
  if (isObject(version) && typeof version['version'] === 'string') {
    return { kind: 'ollama', source: `${root}/api/version` };
  }
  const studio = await askQuietly(get, context, `${root}/api/v0/models`);
  const data = isObject(studio) ? studio['data'] : undefined;
  if (Array.isArray(data) && data.some((entry) => isObject(entry) && typeof entry['type'] === 'string')) {
    return { kind: 'lmstudio', source: `${root}/api/v0/models` };
  }
  return undefined;
}

/** The server root of a model-list URL: `http://host:11434/v1/models` → `http://host:11434`. */
function rootOf(modelsUrl: string): string {
  const url = new URL(modelsUrl);
  const path = url.pathname
    .replace(/\/models\/?$/, '')
    .replace(/\/+$/, '')
    .replace(/\/v1$/, '');
  return `${url.origin}${path}`;
}

/**
 * llama.cpp's `/props` sits at the server root, beside `/v1`: `http://host:8080/v1` → `http://host:8080/props`.
 */
export function propsUrlFor(baseUrl: string): string {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${url.origin}${path}/props`;
}
