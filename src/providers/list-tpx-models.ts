/**
 * The model list of the `tpx` provider: the upstream's `/models`, mapped to the Messages list shape.
 *
 * @module
 */
import { modelsUrl } from '../translate/dialects.js';
import { fallbackModelList, mapModelList } from '../translate/map-model-list.js';
import { readBody, type AttemptContext } from './http-exchange.js';
import type { BearerSend } from './send-with-bearer.js';
import { chatEndpoint, type ChatWireConfig } from './tpx-chat-wire.js';
import { ERROR_BODY_LIMIT, isAnswerInItself, parseJsonLoose } from './upstream-answer.js';

/**
 * Lists the upstream's models. Many OpenAI-compatible servers have no `/models`, or one that needs other
 * rights: an error answer or an unintelligible list falls back to the configured model (`model`). A
 * refused token or an endpoint that cannot be reached is an answer in itself, not a reason to pretend:
 * it is thrown.
 */
export async function listTpxModels(
  config: ChatWireConfig,
  model: string | undefined,
  send: BearerSend,
  context: AttemptContext,
): Promise<unknown> {
  try {
    const url = modelsUrl(config.dialect, chatEndpoint(config, model ?? ''));
    const response = await send(url, { method: 'GET', headers: { accept: 'application/json' } });
    if (response.status >= 200 && response.status <= 299) {
      const mapped = mapModelList(parseJsonLoose(await readBody(response, context, ERROR_BODY_LIMIT * 16)));
      if (mapped !== undefined) return mapped;
    } else {
      response.body.destroy();
    }
  } catch (error) {
    if (context.cancellation.aborted || isAnswerInItself(error)) throw error;
  }
  return fallbackModelList(model);
}
