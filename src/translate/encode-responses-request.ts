/**
 * The wire-neutral request (`neutral-request.ts`) → an OpenAI Responses API request body
 * (`POST {base}/responses`; docs/translation.md, "The Responses wire"), and the Responses wire as the
 * Messages-side front end sees it (`RESPONSES_REQUEST_WIRE`). Pure.
 *
 * The transport keeps no state on the server: the body always carries `store: false` and
 * `include: ["reasoning.encrypted_content"]`, never `previous_response_id`; the whole conversation goes
 * in `input` every turn.
 *
 * Rules that differ from the Chat Completions wire:
 * - `stop_sequences` is refused: the Responses API has no stop parameter.
 * - `max_tokens` below 16 is sent as 16, the smallest `max_output_tokens` OpenAI accepts.
 * - every function tool says `strict` (the Responses API defaults it to `true`, which would reject the
 *   schemas most callers write): the caller's `strict`, else `false`.
 * - reasoning is asked for with a summary (`reasoning.summary: "auto"`) whenever thinking is on and shown:
 *   the summary is what fills the caller's thinking blocks.
 * - documents: base64 files of any type are sent as `input_file`, URL files as `input_file` with
 *   `file_url`, on every server; `content` documents and Files API ids are refused.
 *
 * @module
 */
import type { ResponsesFunctionTool, ResponsesRequest } from '../protocol/responses.js';
import { encodeResponsesInput } from './encode-responses-input.js';
import { invalidRequest } from './invalid-request.js';
import type { NeutralRequest, NeutralTool } from './neutral-request.js';
import type { RequestWire } from './request-wire.js';

/** The smallest `max_output_tokens` OpenAI accepts. */
export const MIN_MAX_OUTPUT_TOKENS = 16;

/** The Responses wire, for `prepareRequest`: no cache markers, files of any kind, its own wording. */
export const RESPONSES_REQUEST_WIRE: RequestWire = {
  name: 'the Responses API',
  prefillRefuser: 'the Responses API',
  serverToolRefusal:
    "server tools and Anthropic-defined tools run on Anthropic's side and have no Responses API equivalent here",
  assistantMediaRefusal: (type) => `the Responses API does not accept ${type} blocks in assistant messages`,
  outputFormatEquivalent: 'a Responses API equivalent (text.format)',
  forwardsCacheControl: false,
  documents: {
    server: 'a Responses API server',
    sourceTypes: ['text', 'base64', 'url'],
    takesBase64Files: true,
    takesFileUrls: true,
    takesAnyFileType: true,
    explainsRefusals: false,
  },
};

/** Options for `encodeResponsesRequest`. */
export interface EncodeResponsesRequestOptions {
  /** Model sent upstream. @default the request's `model` */
  model?: string;
}

/**
 * The Responses API body for a prepared request: the system prompt as `instructions`, the turns as
 * `input` items.
 *
 * @throws TransportError `MODEL_EINVAL` for stop sequences, or a conversation with nothing to send.
 */
export function encodeResponsesRequest(
  prepared: NeutralRequest,
  options: EncodeResponsesRequestOptions = {},
): ResponsesRequest {
  if (prepared.stopSequences.length > 0) {
    invalidRequest(
      'stop_sequences cannot be sent on the Responses wire: the OpenAI Responses API has no stop ' +
        'parameter; remove them, or use the Chat Completions wire (TPX_WIRE=chat)',
    );
  }
  const body: ResponsesRequest = {
    model: options.model ?? prepared.model,
    input: encodeResponsesInput(prepared.turns),
    max_output_tokens: Math.max(prepared.maxTokens, MIN_MAX_OUTPUT_TOKENS),
    store: false,
    include: ['reasoning.encrypted_content'],
  };
  const instructions = prepared.system.map((part) => part.text).join('\n\n');
  if (instructions !== '') body.instructions = instructions;
  if (prepared.temperature !== undefined) body.temperature = prepared.temperature;
  if (prepared.topP !== undefined) body.top_p = prepared.topP;
  if (prepared.stream) body.stream = true;
  if (prepared.tools.length > 0) body.tools = prepared.tools.map(responsesTool);
  const choice = prepared.toolChoice;
  if (choice !== undefined) {
    body.tool_choice = typeof choice === 'string' ? choice : { type: 'function', name: choice.name };
    if (prepared.parallelToolCalls === false) body.parallel_tool_calls = false;
  }
  const reasoning = responsesReasoning(prepared);
  if (reasoning !== undefined) body.reasoning = reasoning;
  if (prepared.outputSchema !== undefined) {
    body.text = {
      format: { type: 'json_schema', name: 'output', schema: prepared.outputSchema, strict: true },
    };
  }
  if (prepared.user !== undefined) body.user = prepared.user;
  return body;
}

/** `reasoning: {effort, summary}`, or nothing when the request asks for neither. */
function responsesReasoning(prepared: NeutralRequest): ResponsesRequest['reasoning'] | undefined {
  if (prepared.effort === undefined && !prepared.summarizesThinking) return undefined;
  return {
    ...(prepared.effort === undefined ? {} : { effort: prepared.effort }),
    ...(prepared.summarizesThinking ? { summary: 'auto' as const } : {}),
  };
}

/** A function tool; without a schema, one for an empty object. */
function responsesTool(tool: NeutralTool): ResponsesFunctionTool {
  const translated: ResponsesFunctionTool = {
    type: 'function',
    name: tool.name,
    parameters: tool.parameters ?? { type: 'object', properties: {} },
    strict: tool.strict === true,
  };
  if (tool.description !== undefined) translated.description = tool.description;
  return translated;
}
