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
import { isObject as isRecord } from '../protocol/is-object.js';
import { createHash } from 'node:crypto';
import { TransportError } from '../errors.js';
import type {
  ChatAssistantMessage,
  ChatCompletionRequest,
  ChatContentPart,
  ChatFunctionTool,
  ChatMessage,
  ChatTextPart,
  ChatToolCall,
  ChatToolChoice,
} from '../protocol/chat-completions.js';
import type {
  MessagesRequest,
  TextBlockParam,
  ThinkingConfig,
  ToolChoice,
  ToolParam,
} from '../protocol/messages.js';
import { anthropicClientTool } from './anthropic-client-tools.js';
import { blockPath, mergeTurns, type PositionedBlock, type Turn } from './check-pairing.js';
import { describeDialect } from './describe-dialect.js';
import { cacheControlOf, forwardsCacheControl } from './map-cache-control.js';
import {
  isTextPart,
  mapDocumentBlock,
  mapImageSource,
  mapSearchResultBlock,
  type DocumentPart,
} from './map-document-block.js';
import type { DialectProfile } from './dialects.js';
import { checkToolIdCollisions } from './check-tool-id-collisions.js';
import { decodeToolId } from './tool-id-codec.js';
import { createToolNameMap, type ToolNameMap } from './tool-name-codec.js';
import { stringifyExactJson } from '../protocol/exact-json.js';

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
/** Prefix marking the content of a `tool_result` with `is_error: true`. */
export const TOOL_ERROR_PREFIX = '[tool error] ';
/** Thinking budgets below this map to `low`; from it up to `HIGH_EFFORT_BUDGET` to `medium`. */
const MEDIUM_EFFORT_BUDGET = 4096;
/** Thinking budgets from this up map to `high`. */
const HIGH_EFFORT_BUDGET = 16384;

function invalid(message: string): never {
  throw new TransportError('MODEL_EINVAL', message);
}

/** Reads a field of a content block without trusting its type: blocks are only checked for `type`. */
function field(block: object, key: string): unknown {
  return (block as Record<string, unknown>)[key];
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
  const responseFormat = translateOutputFormat(...outputFormatOf(request));
  if (responseFormat !== undefined) body.response_format = responseFormat;

  const user = translateUser(request.metadata?.user_id);
  if (user !== undefined) body.user = user;

  // cache_control: forwarded where the server takes it (see map-cache-control.ts), dropped elsewhere.
  const cacheControl = forwardsCacheControl(options.dialect) ? cacheControlOf(request) : undefined;
  if (cacheControl !== undefined) body.cache_control = cacheControl;

  return { body, toolNames };
}

// ---------------------------------------------------------------------------------------------------
// Scalar fields

function translateMaxTokens(maxTokens: number): number {
  if (maxTokens === 0) {
    invalid(
      'max_tokens: 0 asks only to warm the prompt cache, which OpenAI-compatible servers cannot do; ' +
        'send max_tokens of 1 or more',
    );
  }
  if (!Number.isInteger(maxTokens) || maxTokens < 0) {
    invalid(`max_tokens must be a positive integer, got ${JSON.stringify(maxTokens)}`);
  }
  return maxTokens;
}

function translateStopSequences(stopSequences: readonly string[] | undefined): string[] | undefined {
  if (stopSequences === undefined || stopSequences.length === 0) return undefined;
  if (stopSequences.length > MAX_STOP_SEQUENCES) {
    invalid(
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

/**
 * `output_config.effort` wins when present; otherwise the `thinking` config decides. A thinking budget
 * maps by bucket (< 4096 low, < 16384 medium, else high), `adaptive` to medium; `disabled` and thinking
 * types this library does not know leave the server's default.
 */
function translateEffort(effort: unknown, thinking: ThinkingConfig | undefined): string | undefined {
  if (effort !== undefined && effort !== null) {
    switch (effort) {
      case 'low':
        return 'low';
      case 'medium':
        return 'medium';
      case 'high':
        return 'high';
      // Many compatible servers know only low/medium/high: the top two levels become the highest.
      case 'xhigh':
      case 'max':
        return 'high';
      default:
        invalid(
          `output_config.effort ${JSON.stringify(effort)} is not one of "low", "medium", "high", "xhigh", "max"`,
        );
    }
  }
  if (thinking === undefined) return undefined;
  switch (thinking.type) {
    case 'enabled': {
      const budget = thinking['budget_tokens'];
      if (typeof budget !== 'number' || !Number.isFinite(budget)) {
        invalid('thinking.budget_tokens must be a number when thinking.type is "enabled"');
      }
      if (budget < MEDIUM_EFFORT_BUDGET) return 'low';
      if (budget < HIGH_EFFORT_BUDGET) return 'medium';
      return 'high';
    }
    case 'adaptive':
      return 'medium';
    default:
      // 'disabled', and types added to the protocol later: no reasoning_effort, the server decides.
      return undefined;
  }
}

/**
 * The requested output format and the field it came from: `output_config.format`, or the older top-level
 * `output_format` that Anthropic still accepts during its transition (the same shape). Both at once must
 * agree, since neither can be said to win.
 */
function outputFormatOf(request: MessagesRequest): [unknown, string] {
  const current = request.output_config?.format;
  const legacy = request['output_format'];
  const isSet = (value: unknown) => value !== undefined && value !== null;
  if (isSet(current) && isSet(legacy) && JSON.stringify(current) !== JSON.stringify(legacy)) {
    invalid(
      'output_format and output_config.format are both set and differ; send only output_config.format ' +
        '(output_format is its older name)',
    );
  }
  return isSet(current) ? [current, 'output_config.format'] : [legacy, 'output_format'];
}

function translateOutputFormat(format: unknown, fieldName: string): ChatCompletionRequest['response_format'] {
  if (format === undefined || format === null) return undefined;
  if (!isRecord(format) || format['type'] !== 'json_schema') {
    const type = isRecord(format) ? JSON.stringify(format['type']) : typeof format;
    invalid(
      `${fieldName} of type ${type} cannot be translated; only {"type": "json_schema", "schema": {…}} ` +
        'has a Chat Completions equivalent (response_format)',
    );
  }
  const schema = format['schema'];
  if (!isRecord(schema)) invalid(`${fieldName}.schema must be a JSON Schema object`);
  return { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } };
}

// ---------------------------------------------------------------------------------------------------
// Tools

/**
 * Server tools run on Anthropic's side: nothing on the other side can run them. Anthropic-defined client
 * tools (`bash_*`, `text_editor_*`, …) are run by the caller and pass (see `anthropic-client-tools.ts`).
 */
function rejectServerTools(tools: readonly ToolParam[], dialect: DialectProfile | undefined): void {
  tools.forEach((tool, index) => {
    if (tool.type === undefined || tool.type === null || tool.type === 'custom') return;
    if (anthropicClientTool(tool) !== undefined) return;
    invalid(
      `tools[${index}] (${JSON.stringify(tool.name)}) has type ${JSON.stringify(tool.type)}: a server tool that ` +
        `runs on Anthropic's side, which ${describeDialect(dialect)} cannot run; remove it, or use the ` +
        'anthropic provider',
    );
  });
}

function translateTool(tool: ToolParam, toolNames: ToolNameMap): ChatFunctionTool {
  const fn: ChatFunctionTool['function'] = { name: toolNames.toUpstream(tool.name) };
  const clientTool = anthropicClientTool(tool);
  if (clientTool !== undefined) {
    // The documented schema: the caller sent only the type, which a model other than Claude cannot know.
    return {
      type: 'function',
      function: { ...fn, description: clientTool.description, parameters: { ...clientTool.input_schema } },
    };
  }
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (isRecord(tool.input_schema)) fn.parameters = tool.input_schema;
  if (typeof tool['strict'] === 'boolean') fn.strict = tool['strict'];
  // cache_control, defer_loading, input_examples, eager_input_streaming, allowed_callers: dropped.
  return { type: 'function', function: fn };
}

function translateToolChoice(
  choice: ToolChoice,
  tools: readonly ToolParam[],
  toolNames: ToolNameMap,
): { toolChoice: ChatToolChoice; parallelToolCalls: boolean | undefined } | undefined {
  const hasTools = tools.length > 0;
  const parallelToolCalls =
    choice.type !== 'none' && choice.disable_parallel_tool_use === true ? false : undefined;
  switch (choice.type) {
    case 'auto':
      return hasTools ? { toolChoice: 'auto', parallelToolCalls } : undefined;
    case 'none':
      return hasTools ? { toolChoice: 'none', parallelToolCalls } : undefined;
    case 'any':
      if (!hasTools) invalid('tool_choice {"type": "any"} requires at least one tool in tools');
      return { toolChoice: 'required', parallelToolCalls };
    case 'tool':
      if (!tools.some((tool) => tool.name === choice.name)) {
        invalid(`tool_choice names the tool ${JSON.stringify(choice.name)}, which is not in tools`);
      }
      return {
        toolChoice: { type: 'function', function: { name: toolNames.toUpstream(choice.name) } },
        parallelToolCalls,
      };
    default: {
      const unknown: never = choice;
      return invalid(
        `tool_choice has an unknown type ${JSON.stringify((unknown as { type: unknown }).type)}`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Messages

/** The system blocks as text parts, when one of them carries `cache_control` (else `undefined`). */
function cachedSystemParts(system: string | TextBlockParam[] | undefined): ChatTextPart[] | undefined {
  if (!Array.isArray(system) || !system.some((block) => cacheControlOf(block) !== undefined))
    return undefined;
  return system.map((block) => {
    const cacheControl = cacheControlOf(block);
    return cacheControl === undefined
      ? { type: 'text', text: block.text }
      : { type: 'text', text: block.text, cache_control: cacheControl };
  });
}

function systemPromptText(system: string | TextBlockParam[] | undefined): string {
  if (system === undefined) return '';
  if (typeof system === 'string') return system;
  return system
    .map((block, index) => {
      if (block.type !== 'text') {
        invalid(
          `system[${index}] is a ${JSON.stringify(block.type)} block; only text blocks can be translated`,
        );
      }
      return block.text;
    })
    .join('\n\n');
}

/**
 * Walks the merged turns in order. Tool messages are emitted directly after the assistant message whose
 * calls they answer (Chat Completions requires that), taken from the next user turn, even across system
 * messages in between; everything else keeps its order.
 */
function translateMessages(
  request: MessagesRequest,
  toolNames: ToolNameMap,
  dialect: DialectProfile | undefined,
): ChatMessage[] {
  if (request.messages.length === 0) invalid('messages must contain at least one message');
  const messages: ChatMessage[] = [];
  const systemText = systemPromptText(request.system);
  const cachedSystem = forwardsCacheControl(dialect) ? cachedSystemParts(request.system) : undefined;
  if (cachedSystem !== undefined) messages.push({ role: 'system', content: cachedSystem });
  else if (systemText !== '') messages.push({ role: 'system', content: systemText });

  const turns = dropBlankPrefill(mergeTurns(request.messages));
  const answered = new Set<PositionedBlock>();

  turns.forEach((turn, turnIndex) => {
    switch (turn.role) {
      case 'system': {
        const text = systemTurnText(turn);
        if (text !== '') messages.push({ role: 'system', content: text });
        return;
      }
      case 'assistant': {
        const assistant = translateAssistantTurn(turn, toolNames);
        messages.push(assistant);
        if (assistant.tool_calls === undefined) return;
        // The answers are in the next turn that is not a system message, when it is a user turn (the
        // pairing rule); system messages in between follow the tool messages.
        const next = turns.slice(turnIndex + 1).find((later) => later.role !== 'system');
        const results =
          next?.role === 'user'
            ? next.blocks.filter((positioned) => positioned.block.type === 'tool_result')
            : [];
        results.forEach((positioned) => answered.add(positioned));
        messages.push(...translateToolResults(results, dialect));
        return;
      }
      case 'user': {
        // Results no assistant turn asked for still go first, as tool messages (the pairing check
        // refuses such requests before translation, when the caller runs it).
        const unanswered = turn.blocks.filter(
          (positioned) => positioned.block.type === 'tool_result' && !answered.has(positioned),
        );
        messages.push(...translateToolResults(unanswered, dialect));
        const rest = turn.blocks.filter((positioned) => positioned.block.type !== 'tool_result');
        // A turn of nothing but tool results needs no user message; an empty turn still gets one.
        const isOnlyToolResults = rest.length === 0 && turn.blocks.length > 0;
        if (!isOnlyToolResults) {
          messages.push({ role: 'user', content: translateUserContent(rest, dialect) });
        }
        return;
      }
      default: {
        const unknown: never = turn.role;
        invalid(`messages[${turn.messageIndex}] has an unknown role ${JSON.stringify(unknown)}`);
      }
    }
  });
  if (messages.length === 0) {
    invalid('messages holds nothing to send: its only message is a blank assistant message');
  }
  return messages;
}

/**
 * A final assistant turn is a prefill: the model should continue it. Chat Completions servers do not
 * do that reliably, so it is refused, except a blank one (only whitespace text, or nothing), which
 * asks for nothing and is dropped.
 */
function dropBlankPrefill(turns: Turn[]): Turn[] {
  const last = turns.at(-1);
  if (last === undefined || last.role !== 'assistant') return turns;
  const isBlank = last.blocks.every(
    ({ block }) => block.type === 'text' && typeof block['text'] === 'string' && block['text'].trim() === '',
  );
  if (!isBlank) {
    invalid(
      `messages[${last.messageIndex}]: the request ends with an assistant message (a prefill), and prefill is ` +
        'not supported by OpenAI-compatible servers; end the request with a user message',
    );
  }
  return turns.slice(0, -1);
}

function systemTurnText(turn: Turn): string {
  return turn.blocks
    .map((positioned) => {
      const { block } = positioned;
      if (block.type !== 'text' || typeof block['text'] !== 'string') {
        invalid(
          `${blockPath(positioned)} is a ${JSON.stringify(block.type)} block in a system message; only text can be translated`,
        );
      }
      return block['text'];
    })
    .join('\n\n');
}

function translateAssistantTurn(turn: Turn, toolNames: ToolNameMap): ChatAssistantMessage {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const positioned of turn.blocks) {
    const { block } = positioned;
    switch (block.type) {
      case 'text':
        texts.push(String(block['text']));
        break;
      case 'thinking':
        reasoning.push(String(block['thinking']));
        break;
      case 'redacted_thinking':
        // Encrypted for Anthropic only: nothing another server can read. Dropped.
        break;
      case 'tool_use':
        toolCalls.push({
          id: decodeToolId(String(block['id'])),
          type: 'function',
          function: {
            name: toolNames.toUpstream(String(block['name'])),
            arguments: stringifyExactJson(block['input'] ?? {}),
          },
        });
        break;
      case 'image':
        invalid(`${blockPath(positioned)}: Chat Completions does not accept images in assistant messages`);
        break;
      case 'document':
        invalid(`${blockPath(positioned)}: document blocks are only translated in user messages`);
        break;
      case 'tool_result':
        invalid(
          `${blockPath(positioned)}: tool_result blocks belong in user messages, not assistant messages`,
        );
        break;
      default:
        untranslatable(positioned);
    }
  }
  const message: ChatAssistantMessage = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('\n\n') : toolCalls.length > 0 ? null : '',
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('\n\n');
  return message;
}

function translateUserContent(
  blocks: readonly PositionedBlock[],
  dialect: DialectProfile | undefined,
): string | ChatContentPart[] {
  const forwardsCache = forwardsCacheControl(dialect);
  const parts = blocks.flatMap((positioned): ChatContentPart[] => {
    const { block } = positioned;
    switch (block.type) {
      case 'text': {
        const cacheControl = forwardsCache ? cacheControlOf(block) : undefined;
        const text = String(block['text']);
        return [
          cacheControl === undefined
            ? { type: 'text', text }
            : { type: 'text', text, cache_control: cacheControl },
        ];
      }
      case 'image':
        return [mapImageSource(block['source'], blockPath(positioned))];
      case 'document':
        return mapDocumentBlock(block, blockPath(positioned), dialect);
      case 'search_result':
        return [mapSearchResultBlock(block, blockPath(positioned))];
      case 'tool_use':
      case 'thinking':
      case 'redacted_thinking':
        return invalid(
          `${blockPath(positioned)}: ${block.type} blocks belong in assistant messages, not user messages`,
        );
      default:
        return untranslatable(positioned);
    }
  });
  const [only] = parts;
  if (parts.length === 1 && only !== undefined && only.type === 'text' && only.cache_control === undefined) {
    return only.text;
  }
  return parts.length === 0 ? '' : parts;
}

function untranslatable(positioned: PositionedBlock): never {
  invalid(
    `${blockPath(positioned)}: a ${JSON.stringify(positioned.block.type)} block cannot be translated to ` +
      'Chat Completions; remove it, or use the anthropic provider',
  );
}

/**
 * One tool message per `tool_result`, in order; then, when any result carried images or files (which
 * tool messages cannot hold), one user message with them, each group introduced by a text part naming
 * its tool call.
 */
function translateToolResults(
  results: readonly PositionedBlock[],
  dialect: DialectProfile | undefined,
): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const attachmentParts: ChatContentPart[] = [];
  for (const positioned of results) {
    const { block } = positioned;
    const toolCallId = decodeToolId(String(field(block, 'tool_use_id')));
    const { text, attachments } = toolResultContent(field(block, 'content'), blockPath(positioned), dialect);
    const content = field(block, 'is_error') === true ? `${TOOL_ERROR_PREFIX}${text}` : text;
    messages.push({ role: 'tool', tool_call_id: toolCallId, content });
    if (attachments.length > 0) {
      const what = attachments.every((part) => part.type === 'image_url') ? 'Images' : 'Files';
      attachmentParts.push(
        { type: 'text', text: `${what} from the result of tool call ${toolCallId}:` },
        ...attachments,
      );
    }
  }
  if (attachmentParts.length > 0) messages.push({ role: 'user', content: attachmentParts });
  return messages;
}

function toolResultContent(
  content: unknown,
  path: string,
  dialect: DialectProfile | undefined,
): { text: string; attachments: DocumentPart[] } {
  if (content === undefined || content === null) return { text: '', attachments: [] };
  if (typeof content === 'string') return { text: content, attachments: [] };
  if (!Array.isArray(content)) invalid(`${path}.content must be a string or an array of blocks`);
  const texts: string[] = [];
  const attachments: DocumentPart[] = [];
  content.forEach((inner: unknown, index) => {
    const innerPath = `${path}.content[${index}]`;
    const type = isRecord(inner) ? inner['type'] : undefined;
    if (!isRecord(inner)) invalid(`${innerPath} must be a content block`);
    switch (type) {
      case 'text':
        texts.push(String(inner['text']));
        break;
      case 'image':
        attachments.push(mapImageSource(inner['source'], innerPath));
        break;
      case 'document':
        // Text goes into the tool message; images and files follow in a user message.
        for (const part of mapDocumentBlock(inner, innerPath, dialect)) {
          if (isTextPart(part)) texts.push(part.text);
          else attachments.push(part);
        }
        break;
      case 'search_result':
        texts.push(mapSearchResultBlock(inner, innerPath).text);
        break;
      default:
        invalid(
          `${innerPath}: a ${JSON.stringify(type)} block inside a tool_result cannot be translated to Chat ` +
            'Completions; remove it, or use the anthropic provider',
        );
    }
  });
  return { text: texts.join('\n'), attachments };
}
