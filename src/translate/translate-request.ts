/**
 * Request translation, Messages → Chat Completions (docs/protocol.md D.1 and D.2; the full rule tables are
 * in docs/translation.md): the shared Messages-side step (`prepareRequest`) for the Chat Completions wire
 * (`chatRequestWire`), then the Chat Completions encoder (`encodeChatRequest`). A pure function: no I/O,
 * no environment, no clock.
 *
 * Every field of a Messages request is either mapped, dropped by a documented rule, or refused with a
 * `MODEL_EINVAL` error that names the field and its position.
 *
 * Lossy rules worth knowing (each one is in docs/translation.md):
 * - `top_k`, `cache_control`, `service_tier`, `container`, `context_management`, `mcp_servers`,
 *   `inference_geo`, `diagnostics`, `speed` and any other field not listed in the tables are dropped;
 *   `anthropic-beta` is a header and never reaches this function.
 * - `redacted_thinking` blocks are dropped: their content is encrypted for Anthropic only.
 * - `is_error: true` on a `tool_result` has no Chat Completions field: the content gets the prefix
 *   `"[tool error] "` instead.
 * - a `metadata.user_id` longer than 64 characters is sent as the sha256 hex digest of itself.
 *
 * @module
 */
import type { ChatCompletionRequest } from '../protocol/chat-completions.js';
import type { MessagesRequest } from '../protocol/messages.js';
import { chatRequestWire } from './chat-request-wire.js';
import type { DialectProfile } from './dialects.js';
import { encodeChatRequest, type EncodeChatRequestOptions } from './encode-chat-request.js';
import { prepareRequest } from './prepare-request.js';
import { toolInputSchemas, type ToolInputSchemas } from './read-tool-input.js';
import type { ToolNameMap } from './tool-name-codec.js';

/** Options for `translateRequest`. */
export interface TranslateRequestOptions extends EncodeChatRequestOptions {
  /**
   * The upstream's dialect: decides what documents and `cache_control` become, and is named in refusals
   * of what that server family cannot take. @default a generic OpenAI-compatible server
   */
  dialect?: DialectProfile;
}

/** The translated body, and the tool-name map and tool schemas needed to translate the answer back. */
export interface TranslatedRequest {
  body: ChatCompletionRequest;
  toolNames: ToolNameMap;
  /** The request's tool input schemas by upstream name, for fitting tool arguments (`readToolArguments`). */
  toolSchemas: ToolInputSchemas;
}

/**
 * Translates a Messages request into a Chat Completions request.
 *
 * Tool-call ids are decoded with the tool-id codec (the caller's ids back to the provider's own), tool
 * names are encoded with the request's tool-name map, and the map is returned so the response can be
 * translated back. Pairing of tool_use and tool_result is not checked here: see `checkPairing`.
 *
 * @throws TransportError `MODEL_EINVAL` when the request asks for something Chat Completions cannot
 *   express (the message names the field and its position).
 */
export function translateRequest(
  request: MessagesRequest,
  options: TranslateRequestOptions = {},
): TranslatedRequest {
  const prepared = prepareRequest(request, chatRequestWire(options.dialect));
  return {
    body: encodeChatRequest(prepared, options),
    toolNames: prepared.toolNames,
    toolSchemas: toolInputSchemas(request.tools ?? [], (name) => prepared.toolNames.toUpstream(name)),
  };
}
