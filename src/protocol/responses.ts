/**
 * The OpenAI Responses API (`POST {base}/responses`) as OpenAI and compatible servers (vLLM, Ollama,
 * llama.cpp, Azure) speak it: the request we build, and the response object and stream events we
 * receive. What comes back is typed loosely: compatible servers omit `output_index`, `sequence_number`
 * and `content_index` (llama.cpp's stream events carry only `item_id`), and add fields of their own.
 * Run-time validators live in `validate-responses.ts`.
 *
 * The transport keeps no state on the server: every request says `store: false` and asks for
 * `include: ["reasoning.encrypted_content"]`, and never sends `previous_response_id`.
 *
 * @module
 */

// ---------------------------------------------------------------------------------------------------
// The request

export interface ResponsesInputText {
  type: 'input_text';
  text: string;
}

export interface ResponsesInputImage {
  type: 'input_image';
  /** A URL or a `data:` URL. */
  image_url: string;
  detail: 'auto' | 'low' | 'high';
}

export interface ResponsesInputFile {
  type: 'input_file';
  filename?: string;
  /** A `data:` URL of the file. */
  file_data?: string;
  file_url?: string;
}

export type ResponsesInputContent = ResponsesInputText | ResponsesInputImage | ResponsesInputFile;

export interface ResponsesOutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
}

/** A user or system message of the conversation. */
export interface ResponsesInputMessage {
  type: 'message';
  role: 'user' | 'system' | 'developer';
  content: ResponsesInputContent[];
}

/** An earlier assistant message, sent back as history. */
export interface ResponsesAssistantMessage {
  type: 'message';
  role: 'assistant';
  content: ResponsesOutputText[];
}

/** A tool call the model made in an earlier turn. */
export interface ResponsesFunctionCall {
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
}

/** The caller's answer to a tool call. */
export interface ResponsesFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string | ResponsesInputContent[];
}

/** An earlier turn's reasoning, restored from a thinking block's signature. */
export interface ResponsesReasoningItem {
  type: 'reasoning';
  id?: string;
  summary: { type: 'summary_text'; text: string }[];
  /** Reasoning text (gpt-oss on vLLM and llama.cpp); llama.cpp refuses a reasoning item without it. */
  content: { type: 'reasoning_text'; text: string }[];
  encrypted_content?: string;
}

export type ResponsesInputItem =
  | ResponsesInputMessage
  | ResponsesAssistantMessage
  | ResponsesFunctionCall
  | ResponsesFunctionCallOutput
  | ResponsesReasoningItem;

/** A function tool: flat, unlike Chat Completions' `{type, function: {…}}`. */
export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  /** The Responses API defaults this to `true`; the translator always says which. */
  strict: boolean;
}

export type ResponsesToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; name: string };

/** The Responses request body this library sends. */
export interface ResponsesRequest {
  model: string;
  instructions?: string;
  input: ResponsesInputItem[];
  max_output_tokens: number;
  temperature?: number;
  top_p?: number;
  stream?: boolean;
  tools?: ResponsesFunctionTool[];
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean;
  reasoning?: { effort?: string; summary?: 'auto' | 'concise' | 'detailed' };
  text?: { format: { type: 'json_schema'; name: string; schema: unknown; strict: boolean } };
  user?: string;
  store: false;
  include: ['reasoning.encrypted_content'];
}

// ---------------------------------------------------------------------------------------------------
// What servers send back (loose: fields may be absent or null on some server)

export interface ResponsesUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  total_tokens?: number | null;
  input_tokens_details?: { cached_tokens?: number | null; [key: string]: unknown } | null;
  output_tokens_details?: { reasoning_tokens?: number | null; [key: string]: unknown } | null;
  [key: string]: unknown;
}

/** One item of a response's `output` (or of `response.output_item.added` / `.done`). */
export interface ResponsesOutputItem {
  type?: string | null;
  id?: string | null;
  /** `message`: `output_text` and `refusal` parts. `reasoning`: `reasoning_text` parts. */
  content?: unknown[] | null;
  role?: string | null;
  /** `function_call` */
  call_id?: string | null;
  name?: string | null;
  arguments?: unknown;
  /** `reasoning` */
  summary?: unknown[] | null;
  encrypted_content?: string | null;
  status?: string | null;
  [key: string]: unknown;
}

/** An error object as the Responses API reports it (`response.error`, or an `error` stream event). */
export interface ResponsesErrorObject {
  code?: unknown;
  message?: unknown;
  type?: unknown;
  param?: unknown;
  [key: string]: unknown;
}

/** A response object: the JSON answer, and the payload of the terminal stream events. */
export interface ResponsesResponse {
  id?: string | null;
  object?: string | null;
  status?: string | null;
  model?: string | null;
  output?: ResponsesOutputItem[] | null;
  usage?: ResponsesUsage | null;
  error?: ResponsesErrorObject | null;
  incomplete_details?: { reason?: string | null; [key: string]: unknown } | null;
  [key: string]: unknown;
}

/** One parsed `data:` payload of a Responses stream. Its `type` names the event. */
export interface ResponsesStreamEvent {
  type: string;
  sequence_number?: number | null;
  output_index?: number | null;
  item_id?: string | null;
  content_index?: number | null;
  summary_index?: number | null;
  delta?: unknown;
  item?: ResponsesOutputItem | null;
  response?: ResponsesResponse | null;
  [key: string]: unknown;
}
