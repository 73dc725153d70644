/**
 * The Messages side of request translation, shared by both wires of the `tpx` provider: a Messages
 * request → its wire-neutral form (`neutral-request.ts`), which `encodeChatRequest` or
 * `encodeResponsesRequest` then writes in its wire's shapes. A pure function: no I/O, no environment, no
 * clock.
 *
 * Every field of a Messages request is read here, or dropped by a documented rule (docs/translation.md),
 * or refused with a `MODEL_EINVAL` error naming the field and its position, in the wire's words
 * (`RequestWire`). Fields no OpenAI-compatible wire has are dropped here: `top_k`, `service_tier`,
 * `container`, `context_management` (applied before translation, `apply-context-edits.ts`),
 * `mcp_servers`, `inference_geo`, `diagnostics`, `speed`, and any field not in the tables.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { MessagesRequest } from '../protocol/messages.js';
import { checkToolIdCollisions } from './check-tool-id-collisions.js';
import { invalidRequest } from './invalid-request.js';
import { cacheControlOf } from './map-cache-control.js';
import type { NeutralRequest } from './neutral-request.js';
import { prepareConversation } from './prepare-conversation.js';
import { readEffort, summarizesThinking } from './read-effort.js';
import { readOutputFormat } from './read-output-format.js';
import { readTool, rejectServerTools } from './read-tool.js';
import { readToolChoice } from './read-tool-choice.js';
import type { RequestWire } from './request-wire.js';
import { createToolNameMap } from './tool-name-codec.js';

/** Longest `user` value OpenAI accepts; longer ids are hashed. */
const MAX_USER_LENGTH = 64;

/**
 * Reads a Messages request for `wire`. Tool-call ids are decoded with the tool-id codec (the caller's ids
 * back to the provider's own) and tool names encoded with the request's tool-name map, which comes back
 * with the result so the answer can be translated back. Pairing of tool_use and tool_result is not
 * checked here: see `checkPairing`.
 *
 * @throws TransportError `MODEL_EINVAL` when the request asks for something no OpenAI-compatible wire
 *   can express, or `wire` cannot (the message names the field and its position).
 */
export function prepareRequest(request: MessagesRequest, wire: RequestWire): NeutralRequest {
  checkToolIdCollisions(request);
  const tools = request.tools ?? [];
  rejectServerTools(tools, wire.serverToolRefusal);
  const toolNames = createToolNameMap(tools);
  const { system, turns } = prepareConversation(request, toolNames, wire);
  const maxTokens = readMaxTokens(request.max_tokens);
  const choice =
    request.tool_choice === undefined ? undefined : readToolChoice(request.tool_choice, tools, toolNames);
  return {
    model: request.model,
    system,
    turns,
    maxTokens,
    stopSequences: request.stop_sequences ?? [],
    temperature: typeof request.temperature === 'number' ? request.temperature : undefined,
    topP: typeof request.top_p === 'number' ? request.top_p : undefined,
    stream: request.stream === true,
    tools: tools.map((tool) => readTool(tool, toolNames)),
    toolChoice: choice?.toolChoice,
    parallelToolCalls: choice?.parallelToolCalls,
    effort: readEffort(request.output_config?.effort, request.thinking),
    summarizesThinking: summarizesThinking(request.thinking),
    outputSchema: readOutputFormat(request, wire.outputFormatEquivalent),
    user: readUser(request.metadata?.user_id),
    // cache_control: forwarded where the server takes it (see map-cache-control.ts), dropped elsewhere.
    cacheControl: wire.forwardsCacheControl ? cacheControlOf(request) : undefined,
    toolNames,
  };
}

function readMaxTokens(maxTokens: number): number {
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

/** `metadata.user_id` → `user`; longer than 64 characters → its sha256 hex digest (64 characters). */
function readUser(userId: string | null | undefined): string | undefined {
  if (typeof userId !== 'string' || userId === '') return undefined;
  if (userId.length <= MAX_USER_LENGTH) return userId;
  return createHash('sha256').update(userId, 'utf8').digest('hex');
}
