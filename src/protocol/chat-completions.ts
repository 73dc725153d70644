/**
 * The OpenAI Chat Completions protocol as OpenAI-compatible servers speak it: the request we build, and
 * the response, stream chunk and error body we receive (typed loosely: real servers add and omit
 * fields; see docs/protocol.md Part C). Run-time validators live in `validate-chat-completions.ts`.
 *
 * @module
 */

/** Anthropic-style cache marker, which some servers (OpenRouter) take on text parts and the request. */
export interface ChatCacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface ChatTextPart {
  type: 'text';
  text: string;
  cache_control?: ChatCacheControl;
}

export interface ChatImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/** A file (OpenAI: PDFs) as `file_data`, a data URL; some servers also take a plain URL there. */
export interface ChatFilePart {
  type: 'file';
  file: { filename?: string; file_data?: string; file_id?: string };
}

export type ChatContentPart = ChatTextPart | ChatImagePart | ChatFilePart;

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatSystemMessage {
  role: 'system' | 'developer';
  /** Text parts only where a part carries `cache_control`. */
  content: string | ChatTextPart[];
}

export interface ChatUserMessage {
  role: 'user';
  content: string | ChatContentPart[];
}

export interface ChatAssistantMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: ChatToolCall[];
  /** Reasoning replayed to servers that want it back on tool turns (DeepSeek, Kimi). */
  reasoning_content?: string;
}

export interface ChatToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

export type ChatMessage = ChatSystemMessage | ChatUserMessage | ChatAssistantMessage | ChatToolMessage;

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

/** The Chat Completions request body this library sends. */
export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string[];
  stream?: boolean;
  stream_options?: { include_usage: boolean };
  tools?: ChatFunctionTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
  reasoning_effort?: string;
  response_format?: { type: 'json_schema'; json_schema: { name: string; schema: unknown; strict?: boolean } };
  user?: string;
  /** Top-level automatic caching, for servers that take it (OpenRouter). */
  cache_control?: ChatCacheControl;
}

// ---------------------------------------------------------------------------------------------------
// What servers send back (loose: every field may be absent or null on some server)

export interface ChatCompletionUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  total_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  /** DeepSeek's name for cached prompt tokens. */
  prompt_cache_hit_tokens?: number | null;
  [key: string]: unknown;
}

/** A tool call as received: ids and names may be missing or empty; arguments may be an object. */
export interface ChatToolCallIn {
  index?: number | null;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: unknown } | null;
  [key: string]: unknown;
}

export interface ChatResponseMessage {
  role?: string | null;
  content?: string | unknown[] | null;
  refusal?: string | null;
  tool_calls?: ChatToolCallIn[] | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  [key: string]: unknown;
}

export interface ChatCompletionChoice {
  index?: number;
  message: ChatResponseMessage;
  finish_reason?: string | null;
  [key: string]: unknown;
}

/** A non-streaming Chat Completions response. */
export interface ChatCompletionResponse {
  id?: string | null;
  model?: string | null;
  choices: ChatCompletionChoice[];
  usage?: ChatCompletionUsage | null;
  [key: string]: unknown;
}

export interface ChatChunkChoice {
  index?: number;
  delta?: ChatResponseMessage | null;
  finish_reason?: string | null;
  [key: string]: unknown;
}

/** An error object as servers send it, in a body or inside a stream chunk. */
export interface ChatErrorObject {
  message?: unknown;
  type?: unknown;
  code?: unknown;
  param?: unknown;
  [key: string]: unknown;
}

/** One parsed `data:` payload of a Chat Completions stream. */
export interface ChatCompletionChunk {
  id?: string | null;
  model?: string | null;
  choices?: ChatChunkChoice[] | null;
  usage?: ChatCompletionUsage | null;
  error?: ChatErrorObject | null;
  [key: string]: unknown;
}
