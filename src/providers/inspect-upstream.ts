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
import type { UpstreamReport } from './exchange-types.js';
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
 * its failure is ignored.
 *
 * @throws TransportError when the model list cannot be fetched at all (connection refused, deadline,
 * credentials refused): the upstream is not there or not ours to use.
 */
export async function inspectOpenAiUpstream(
  get: AuthorizedGet,
  context: AttemptContext,
  urls: { modelsUrl: string; propsUrl?: string | undefined },
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
    const models = readModelCatalog(parseLoose(text));
    if (models === undefined) report.problem = describeNotAList(contentType, text);
    else report.models = models;
  }
  if (urls.propsUrl !== undefined && report.models !== undefined) {
    try {
      const props = await get(urls.propsUrl);
      const propsText = await readBody(props, context, ERROR_BODY_LIMIT);
      const tokens = props.status === 200 ? readContextSize(parseLoose(propsText)) : undefined;
      if (tokens !== undefined) report.contextWindow = { tokens, source: urls.propsUrl };
    } catch (error) {
      // A server without /props simply states no window; only a cancel ends the inspection.
      if (context.cancellation.aborted && isTransportError(error)) throw error;
    }
  }
  return report;
}

/**
 * llama.cpp's `/props` sits at the server root, beside `/v1`: `http://host:8080/v1` → `http://host:8080/props`.
 */
export function propsUrlFor(baseUrl: string): string {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${url.origin}${path}/props`;
}
