/**
 * Request translation, Messages → the OpenAI Responses API (`POST {base}/responses`): the shared
 * Messages-side step (`prepareRequest`) for the Responses wire (`RESPONSES_REQUEST_WIRE`), then the
 * Responses encoder (`encodeResponsesRequest`). A pure function: no I/O, no environment, no clock. The
 * rule table is in `docs/translation.md`, section "The Responses wire".
 *
 * An earlier turn's reasoning comes back from the thinking block's signature
 * (`reasoning-signature-codec.ts`), tool-call ids from the tool-id codec, tool names from the tool-name
 * codec — so any replica can translate any turn.
 *
 * @module
 */
import type { MessagesRequest } from '../protocol/messages.js';
import type { ResponsesRequest } from '../protocol/responses.js';
import {
  encodeResponsesRequest,
  RESPONSES_REQUEST_WIRE,
  type EncodeResponsesRequestOptions,
} from './encode-responses-request.js';
import { prepareRequest } from './prepare-request.js';
import { toolInputSchemas, type ToolInputSchemas } from './read-tool-input.js';
import type { ToolNameMap } from './tool-name-codec.js';

/** Options for `translateResponsesRequest`. */
export type TranslateResponsesRequestOptions = EncodeResponsesRequestOptions;

/** The translated body, and the tool-name map and tool schemas needed to translate the answer back. */
export interface TranslatedResponsesRequest {
  body: ResponsesRequest;
  toolNames: ToolNameMap;
  /** The request's tool input schemas by upstream name, for fitting tool arguments (`readToolArguments`). */
  toolSchemas: ToolInputSchemas;
}

/**
 * Translates a Messages request into a Responses API request.
 *
 * @throws TransportError `MODEL_EINVAL` when the request asks for something the Responses API cannot
 *   express (the message names the field and its position).
 */
export function translateResponsesRequest(
  request: MessagesRequest,
  options: TranslateResponsesRequestOptions = {},
): TranslatedResponsesRequest {
  const prepared = prepareRequest(request, RESPONSES_REQUEST_WIRE);
  return {
    body: encodeResponsesRequest(prepared, options),
    toolNames: prepared.toolNames,
    toolSchemas: toolInputSchemas(request.tools ?? [], (name) => prepared.toolNames.toUpstream(name)),
  };
}
