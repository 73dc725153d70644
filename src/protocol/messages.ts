/**
 * The Anthropic Messages protocol: wire types (field names exactly as on the wire) for requests,
 * responses, stream events and error bodies. Run-time validators live in `validate-messages.ts`.
 *
 * Unknown fields are part of the protocol's future: every object type here tolerates extra keys, and
 * the validators keep them.
 *
 * @module
 */

/** `cache_control` as it may appear on blocks, tools and the request. Carried, never interpreted. */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface TextBlockParam {
  type: 'text';
  text: string;
  cache_control?: CacheControl | null;
  citations?: unknown[] | null;
}

export interface Base64ImageSource {
  type: 'base64';
  media_type: string;
  data: string;
}

export interface UrlImageSource {
  type: 'url';
  url: string;
}

export interface ImageBlockParam {
  type: 'image';
  source: Base64ImageSource | UrlImageSource | { type: string; [key: string]: unknown };
  cache_control?: CacheControl | null;
}

export interface DocumentBlockParam {
  type: 'document';
  source: { type: string; [key: string]: unknown };
  title?: string | null;
  context?: string | null;
  cache_control?: CacheControl | null;
}

export interface ToolUseBlockParam {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: CacheControl | null;
}

export type ToolResultContentBlock = TextBlockParam | ImageBlockParam | DocumentBlockParam | OtherBlock;

export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | ToolResultContentBlock[];
  is_error?: boolean;
  cache_control?: CacheControl | null;
}

export interface ThinkingBlockParam {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlockParam {
  type: 'redacted_thinking';
  data: string;
}

/**
 * A block type this library does not translate (server-tool blocks, `search_result`, types added to the
 * protocol later). The native provider passes it through; the `tpx` provider refuses it by name.
 */
export interface OtherBlock {
  type: string;
  [key: string]: unknown;
}

/** The content blocks a request may carry, known ones first. */
export type ContentBlockParam =
  | TextBlockParam
  | ImageBlockParam
  | DocumentBlockParam
  | ToolUseBlockParam
  | ToolResultBlockParam
  | ThinkingBlockParam
  | RedactedThinkingBlockParam;

export type MessageRole = 'user' | 'assistant' | 'system';

export interface MessageParam {
  role: MessageRole;
  content: string | (ContentBlockParam | OtherBlock)[];
}

/**
 * A tool: a client tool (`input_schema`, no `type` or `type: "custom"`), or a server / Anthropic-defined
 * tool with a versioned `type`. The toolsets of SDK 1.14 (`browser_toolset_20260801`,
 * `computer_toolset_20260801`) have a `type` and no `name`: the validator accepts a nameless tool only
 * when its `type` is set and not `custom`, so read `name` after checking `type`.
 */
export interface ToolParam {
  name: string;
  description?: string;
  input_schema?: Record<string, unknown>;
  /** Absent, `null` or `custom` for client tools; a versioned name (`web_search_20250305`) for server tools. */
  type?: string | null;
  cache_control?: CacheControl | null;
  [key: string]: unknown;
}

export type ToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type ThinkingConfig =
  | { type: 'enabled'; budget_tokens: number; display?: string | null }
  | { type: 'adaptive'; display?: string | null }
  | { type: 'disabled' }
  | { type: string; [key: string]: unknown };

/** A Messages request body (`POST /v1/messages`). Unknown fields are kept. */
export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: string | TextBlockParam[];
  stop_sequences?: string[];
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: ToolParam[];
  tool_choice?: ToolChoice;
  thinking?: ThinkingConfig;
  metadata?: { user_id?: string | null; [key: string]: unknown };
  output_config?: { effort?: string | null; format?: unknown; [key: string]: unknown };
  [key: string]: unknown;
}

// ---------------------------------------------------------------------------------------------------
// Responses

export interface TextBlock {
  type: 'text';
  text: string;
  citations?: unknown[] | null;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** The content blocks a response may carry. Server-tool blocks arrive as `OtherBlock` on the native path. */
export type ContentBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock;

export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  [key: string]: unknown;
}

/** A Messages response (`type: "message"`). */
export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: (ContentBlock | OtherBlock)[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: Usage;
  [key: string]: unknown;
}

// ---------------------------------------------------------------------------------------------------
// Stream events

export interface MessageStartEvent {
  type: 'message_start';
  message: Message;
}

export interface ContentBlockStartEvent {
  type: 'content_block_start';
  index: number;
  content_block: ContentBlock | OtherBlock;
}

export type ContentBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'citations_delta'; citation: unknown };

export interface ContentBlockDeltaEvent {
  type: 'content_block_delta';
  index: number;
  delta: ContentBlockDelta;
}

export interface ContentBlockStopEvent {
  type: 'content_block_stop';
  index: number;
}

export interface MessageDeltaUsage {
  output_tokens: number;
  input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  [key: string]: unknown;
}

/** What context editing did to the prompt (`context_management` of a message or `message_delta`). */
export interface ContextManagementResponse {
  applied_edits: { type: string; [key: string]: unknown }[];
}

export interface MessageDeltaEvent {
  type: 'message_delta';
  delta: { stop_reason: StopReason | null; stop_sequence: string | null; [key: string]: unknown };
  usage: MessageDeltaUsage;
  context_management?: ContextManagementResponse | null;
}

export interface MessageStopEvent {
  type: 'message_stop';
}

export interface PingEvent {
  type: 'ping';
}

export interface ErrorEvent {
  type: 'error';
  error: { type: string; message: string };
}

/** A Messages stream event, as `data:` of an SSE frame whose `event:` is the same `type`. */
export type MessageStreamEvent =
  | MessageStartEvent
  | ContentBlockStartEvent
  | ContentBlockDeltaEvent
  | ContentBlockStopEvent
  | MessageDeltaEvent
  | MessageStopEvent
  | PingEvent;
