/**
 * Request translation, Messages → Chat Completions (PROTOCOLS.md D.1 and D.2; the full rule tables are
 * in docs/translation.md). A pure function: no I/O, no environment, no clock.
 *
 * Every field of a Messages request is either mapped, dropped by a documented rule, or refused with a
 * `MODEL_EINVAL` error that names the field and its position. The body is built field by field, so
 * nothing reaches the provider that is not part of `ChatCompletionRequest`.
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
import { createHash } from 'node:crypto';
import type { ChatCompletionRequest } from '../protocol/chat-completions.js';
import type { MessagesRequest } from '../protocol/messages.js';
import { checkToolIdCollisions } from './check-tool-id-collisions.js';
import type { DialectProfile } from './dialects.js';
import { invalidRequest } from './invalid-request.js';
import { cacheControlOf, forwardsCacheControl } from './map-cache-control.js';
import { createToolNameMap, type ToolNameMap } from './tool-name-codec.js';
import { translateEffort } from './translate-effort.js';
import { translateMessages } from './translate-messages.js';
import { translateOutputFormat } from './translate-output-format.js';
import { rejectServerTools, translateTool } from './translate-tool.js';
import { translateToolChoice } from './translate-tool-choice.js';

/** Options for `translateRequest`. */
export interface TranslateRequestOptions {
  /** Model sent upstream. @default the request's `model` */
  model?: string;
  /**
   * Which field carries `max_tokens` upstream: reasoning models want `max_completion_tokens`, many
   * compatible servers only know `max_tokens`. @default 'max_tokens'
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /**
   * The upstream's dialect: decides what documents and `cache_control` become, and is named in refusals
   * of what that server family cannot take. @default a generic OpenAI-compatible server
   */
  dialect?: DialectProfile;
}

/** The translated body, and the tool-name map needed to translate the answer back. */
export interface TranslatedRequest {
  body: ChatCompletionRequest;
  toolNames: ToolNameMap;
}

/** Chat Completions accepts at most this many `stop` sequences. */
const MAX_STOP_SEQUENCES = 4;
/** Longest `user` value OpenAI accepts; longer ids are hashed. */
const MAX_USER_LENGTH = 64;

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
  checkToolIdCollisions(request);
  const tools = request.tools ?? [];
  rejectServerTools(tools, options.dialect);
  const toolNames = createToolNameMap(tools);

  const body: ChatCompletionRequest = {
    model: options.model ?? request.model,
    messages: translateMessages(request, toolNames, options.dialect),
  };

  body[options.maxTokensField ?? 'max_tokens'] = translateMaxTokens(request.max_tokens);

  const stop = translateStopSequences(request.stop_sequences);
  if (stop !== undefined) body.stop = stop;
  if (typeof request.temperature === 'number') body.temperature = request.temperature;
  if (typeof request.top_p === 'number') body.top_p = request.top_p;
  // top_k: dropped. Chat Completions has no such field (some servers accept it as an extension, but the
  // request type we send does not carry extensions).

  if (request.stream === true) {
    body.stream = true;
    // Always ask for usage: without it a translated stream could not report token counts.
    body.stream_options = { include_usage: true };
  }

  if (tools.length > 0) body.tools = tools.map((tool) => translateTool(tool, toolNames));
  if (request.tool_choice !== undefined) {
    const choice = translateToolChoice(request.tool_choice, tools, toolNames);
    if (choice !== undefined) {
      body.tool_choice = choice.toolChoice;
      if (choice.parallelToolCalls === false) body.parallel_tool_calls = false;
    }
  }

  const effort = translateEffort(request.output_config?.effort, request.thinking);
  if (effort !== undefined) body.reasoning_effort = effort;
  const responseFormat = translateOutputFormat(request);
  if (responseFormat !== undefined) body.response_format = responseFormat;

  const user = translateUser(request.metadata?.user_id);
  if (user !== undefined) body.user = user;

  // cache_control: forwarded where the server takes it (see map-cache-control.ts), dropped elsewhere.
  const cacheControl = forwardsCacheControl(options.dialect) ? cacheControlOf(request) : undefined;
  if (cacheControl !== undefined) body.cache_control = cacheControl;

  return { body, toolNames };
}

function translateMaxTokens(maxTokens: number): number {
  if (maxTokens === 0) {
    invalidRequest(
      'max_tokens: 0 asks only to warm the prompt cache, which OpenAI-compatible servers cannot do; ' +
        'send max_tokens of 1 or more',
    );
  }
  if (!Number.isInteger(maxTokens) || maxTokens < 0) {
    invalidRequest(`max_tokens must be a positive integer, got ${JSON.stringify(maxTokens)}`);
  }
  return maxTokens;
}

function translateStopSequences(stopSequences: readonly string[] | undefined): string[] | undefined {
  if (stopSequences === undefined || stopSequences.length === 0) return undefined;
  if (stopSequences.length > MAX_STOP_SEQUENCES) {
    invalidRequest(
      `stop_sequences has ${stopSequences.length} entries, but OpenAI-compatible servers accept at most ` +
        `${MAX_STOP_SEQUENCES} stop sequences; send ${MAX_STOP_SEQUENCES} or fewer`,
    );
  }
  return [...stopSequences];
}

/** `metadata.user_id` → `user`; longer than 64 characters → its sha256 hex digest (64 characters). */
function translateUser(userId: string | null | undefined): string | undefined {
  if (typeof userId !== 'string' || userId === '') return undefined;
  if (userId.length <= MAX_USER_LENGTH) return userId;
  return createHash('sha256').update(userId, 'utf8').digest('hex');
}
