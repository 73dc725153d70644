/**
 * The wire-neutral form of a Messages request: what the `tpx` provider's two wires (Chat Completions and
 * the Responses API) send alike. `prepareRequest` reads it from the Messages request once; an encoder
 * (`encodeChatRequest`, `encodeResponsesRequest`) writes it in its wire's shapes. Pure data.
 *
 * Everything the Messages request says is settled by the time a value of these types exists: tool-call
 * ids are decoded with the tool-id codec, tool names encoded with the request's tool-name map, documents
 * and search results read into parts, blank prefills dropped, and whatever no wire can carry refused. An
 * encoder chooses its wire's shapes and refuses only what its own wire cannot carry.
 *
 * @module
 */
import type { ChatCacheControl } from '../protocol/chat-completions.js';
import type { ToolNameMap } from './tool-name-codec.js';

/**
 * Anthropic's `cache_control` marker, kept only for a wire whose server takes it as it is
 * (`RequestWire.forwardsCacheControl`; see `map-cache-control.ts`).
 */
export type CacheControl = ChatCacheControl;

/** Text, with the cache marker the wire forwards. */
export interface TextPart {
  type: 'text';
  text: string;
  cacheControl?: CacheControl;
}

/** An image, by `data:` URL or by URL. */
export interface ImagePart {
  type: 'image';
  url: string;
}

/** A file (a PDF document), by `data:` URL or by URL, with the name the server shows the model. */
export interface FilePart {
  type: 'file';
  filename: string;
  url: string;
  isDataUrl: boolean;
}

/** What a user message, a document or a tool result holds. */
export type ContentPart = TextPart | ImagePart | FilePart;

/**
 * One block of an assistant turn, in the turn's order: text, thinking (its signature as the caller sent
 * it), or a tool call (the provider's id and the upstream name, its input as JSON text).
 */
export type AssistantBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string };

/** One `tool_result`: the provider's call id, whether it reports an error, and its content in order. */
export interface ToolResult {
  callId: string;
  isError: boolean;
  parts: ContentPart[];
}

/**
 * One step of the conversation, in the order it goes upstream. `tool` holds the results that answer the
 * calls of the assistant turn just before it (or, unasked for, stand at the start of a user turn).
 */
export type NeutralTurn =
  | { role: 'system'; text: string }
  | { role: 'user'; parts: ContentPart[] }
  | { role: 'assistant'; blocks: AssistantBlock[] }
  | { role: 'tool'; results: ToolResult[] };

/** A function tool: the upstream name, and what the caller said of it. */
export interface NeutralTool {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

/** What `tool_choice` asks of the model: a mode, or the one tool (by upstream name) it must call. */
export type NeutralToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** A Messages request, read and checked, ready for an encoder. */
export interface NeutralRequest {
  /** The request's `model` (an encoder's option may replace it). */
  model: string;
  /** The `system` field: one part per block (a string is one part). */
  system: TextPart[];
  turns: NeutralTurn[];
  /** `max_tokens`, a positive integer. */
  maxTokens: number;
  /** `stop_sequences` as sent; empty when none. */
  stopSequences: readonly string[];
  temperature: number | undefined;
  topP: number | undefined;
  stream: boolean;
  tools: NeutralTool[];
  toolChoice: NeutralToolChoice | undefined;
  /** `false` when the caller set `disable_parallel_tool_use` (and `tool_choice` is not `none`). */
  parallelToolCalls: false | undefined;
  /** `low`, `medium` or `high`, from `output_config.effort` or the thinking config (`read-effort.ts`). */
  effort: string | undefined;
  /** Whether thinking is on and shown: the model's reasoning should come back summarized. */
  summarizesThinking: boolean;
  /** The JSON Schema the answer must follow (`output_config.format`). */
  outputSchema: Record<string, unknown> | undefined;
  /** `metadata.user_id`, hashed when longer than a server takes. */
  user: string | undefined;
  /** The request's own `cache_control`, where the wire forwards it. */
  cacheControl: CacheControl | undefined;
  /** The request's tool-name map, for translating the answer back. */
  toolNames: ToolNameMap;
}
