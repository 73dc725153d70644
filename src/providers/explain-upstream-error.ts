/**
 * Upstream errors that point at their fix. A 404 from a model server means one of two things, and the
 * fixes differ: the model is not served (map the requested name to one that is) or the URL is wrong
 * (the base URL is usually the API root ending in `/v1`, or on the native path the root without it). A
 * refused connection names the host and port nobody listens on.
 *
 * @module
 */
import { TransportError } from '../errors.js';

/** What the failed call was. */
export interface FailedCall {
  method: 'GET' | 'POST';
  url: string;
  /** The model sent, when the call carried one. */
  model?: string;
  /** The variable holding the base URL: `TPX_BASE_URL` or `ANTHROPIC_BASE_URL`. */
  baseUrlVariable: string;
  /**
   * Whether the provider's routes carry their own `/v1` (`{base}/v1/messages`), so that the base URL is
   * the API root without it; otherwise (`{base}/chat/completions`) the base usually ends in `/v1`.
   */
  routesAddV1?: boolean;
}

/** Whether a 404's message is about a model rather than a route (vLLM, OpenAI, Ollama, OpenRouter, Anthropic). */
function isAboutModel(message: string, model: string | undefined): boolean {
  if (model !== undefined && model !== '' && message.includes(model)) return true;
  return /\bmodel\b/i.test(message);
}

function rebuilt(error: TransportError, message: string): TransportError {
  return new TransportError(error.code, message, {
    status: error.status,
    type: error.body.error.type,
    retryable: error.retryable,
    headers: { ...error.headers },
    cause: error,
    ...(error.provider === undefined ? {} : { provider: error.provider }),
    ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
  });
}

/** `error` with a message that names the fix, for a 404; any other error as it is. */
export function explainUpstreamError(error: TransportError, call: FailedCall): TransportError {
  if (error.status !== 404) return error;
  if (isAboutModel(error.message, call.model)) {
    const model = call.model === undefined ? 'the model sent' : `the model ${JSON.stringify(call.model)}`;
    return rebuilt(
      error,
      `the upstream does not serve ${model} (${error.message}). Map requested names to a served model with ` +
        "TPX_MODEL_MAP (--model-map, e.g. '*=served-model'), or set TPX_MODEL; `tpx doctor` lists what the upstream serves",
    );
  }
  const root = call.url.replace(/\/(chat\/completions|responses|v1\/messages|models|v1\/models)(\?.*)?$/, '');
  const endsInV1 = /\/v1$/.test(root);
  const checkIt = `check ${call.baseUrlVariable} (now ${root}) and the port`;
  const hint =
    call.routesAddV1 === true
      ? endsInV1
        ? `${call.baseUrlVariable} is the API root without /v1: try ${root.slice(0, -'/v1'.length)}`
        : checkIt
      : endsInV1
        ? checkIt
        : `${call.baseUrlVariable} is usually the API root ending in /v1: try ${root}/v1`;
  return rebuilt(
    error,
    `the upstream has no endpoint at ${call.method} ${call.url} (404: ${error.message}); ${hint}`,
  );
}
