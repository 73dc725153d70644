/**
 * Request translation, Messages → the OpenAI Responses API (`POST {base}/responses`). A pure function:
 * no I/O, no environment, no clock. The rule table is in `docs/translation.md`, section "The Responses
 * wire".
 *
 * The transport keeps no state on the server: the body always carries `store: false` and
 * `include: ["reasoning.encrypted_content"]`, never `previous_response_id`; the whole conversation goes
 * in `input` every turn. An earlier turn's reasoning comes back from the thinking block's signature
 * (`reasoning-signature-codec.ts`), tool-call ids from the tool-id codec, tool names from the tool-name
 * codec — so any replica can translate any turn.
 *
 * Rules that differ from the Chat Completions wire:
 * - `stop_sequences` is refused: the Responses API has no stop parameter.
 * - `max_tokens` below 16 is sent as 16, the smallest `max_output_tokens` OpenAI accepts.
 * - every function tool says `strict` (the Responses API defaults it to `true`, which would reject the
 *   schemas most callers write): the caller's `strict`, else `false`.
 * - a `thinking` block whose signature this transport made becomes a `reasoning` item; other thinking
 *   blocks (from Anthropic, or from the Chat Completions wire, whose signature is empty) and
 *   `redacted_thinking` blocks are dropped: no Responses server can use them.
 * - base64 PDF documents are sent as `input_file`, URL PDFs as `input_file` with `file_url`.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { TransportError } from '../errors.js';
import type {
  MessagesRequest,
  TextBlockParam,
  ThinkingConfig,
  ToolChoice,
  ToolParam,
} from '../protocol/messages.js';
import type {
  ResponsesFunctionTool,
  ResponsesInputContent,
  ResponsesInputImage,
  ResponsesInputItem,
  ResponsesOutputText,
  ResponsesRequest,
  ResponsesToolChoice,
} from '../protocol/responses.js';
import { anthropicClientTool } from './anthropic-client-tools.js';
import { blockPath, mergeTurns, type PositionedBlock, type Turn } from './check-pairing.js';
import { mapSearchResultBlock } from './map-document-block.js';
import { decodeReasoningSignature } from './reasoning-signature-codec.js';
import { checkToolIdCollisions } from './check-tool-id-collisions.js';
import { decodeToolId } from './tool-id-codec.js';
import { createToolNameMap, type ToolNameMap } from './tool-name-codec.js';
import { TOOL_ERROR_PREFIX } from './translate-tool-results.js';
import { translateToolChoice } from './translate-tool-choice.js';
import { isObject } from '../protocol/is-object.js';
import { stringifyExactJson } from '../protocol/exact-json.js';

/** Options for `translateResponsesRequest`. */
export interface TranslateResponsesRequestOptions {
  /** Model sent upstream. @default the request's `model` */
  model?: string;
}

/** The translated body, and the tool-name map needed to translate the answer back. */
export interface TranslatedResponsesRequest {
  body: ResponsesRequest;
  toolNames: ToolNameMap;
}

/** The smallest `max_output_tokens` OpenAI accepts. */
export const MIN_MAX_OUTPUT_TOKENS = 16;
/** Longest `user` value OpenAI accepts; longer ids are hashed. */
const MAX_USER_LENGTH = 64;
/** Thinking budgets below this map to `low`; from it up to `HIGH_EFFORT_BUDGET` to `medium`. */
const MEDIUM_EFFORT_BUDGET = 4096;
/** Thinking budgets from this up map to `high`. */
const HIGH_EFFORT_BUDGET = 16384;

function invalid(message: string): never {
  throw new TransportError('MODEL_EINVAL', message);
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
  checkToolIdCollisions(request);
  const tools = request.tools ?? [];
  rejectServerTools(tools);
  const toolNames = createToolNameMap(tools);

  if (request.stop_sequences !== undefined && request.stop_sequences.length > 0) {
    invalid(
      'stop_sequences cannot be sent on the Responses wire: the OpenAI Responses API has no stop ' +
        'parameter; remove them, or use the Chat Completions wire (TPX_WIRE=chat)',
    );
  }

  const body: ResponsesRequest = {
    model: options.model ?? request.model,
    input: [],
    max_output_tokens: translateMaxTokens(request.max_tokens),
    store: false,
    include: ['reasoning.encrypted_content'],
  };
  const instructions = systemPromptText(request.system);
  if (instructions !== '') body.instructions = instructions;
  body.input = translateInput(request, toolNames);

  if (typeof request.temperature === 'number') body.temperature = request.temperature;
  if (typeof request.top_p === 'number') body.top_p = request.top_p;
  // top_k: dropped, as on the Chat Completions wire.
  if (request.stream === true) body.stream = true;

  if (tools.length > 0) body.tools = tools.map((tool) => translateTool(tool, toolNames));
  if (request.tool_choice !== undefined) {
    const choice = translateResponsesToolChoice(request.tool_choice, tools, toolNames);
    if (choice !== undefined) {
      body.tool_choice = choice.toolChoice;
      if (choice.parallelToolCalls === false) body.parallel_tool_calls = false;
    }
  }

  const reasoning = translateReasoning(request.output_config?.effort, request.thinking);
  if (reasoning !== undefined) body.reasoning = reasoning;
  const format = translateOutputFormat(request.output_config?.format);
  if (format !== undefined) body.text = { format };

  const user = translateUser(request.metadata?.user_id);
  if (user !== undefined) body.user = user;
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
  return Math.max(maxTokens, MIN_MAX_OUTPUT_TOKENS);
}

function translateUser(userId: string | null | undefined): string | undefined {
  if (typeof userId !== 'string' || userId === '') return undefined;
  if (userId.length <= MAX_USER_LENGTH) return userId;
  return createHash('sha256').update(userId, 'utf8').digest('hex');
}

/**
 * `reasoning: {effort, summary}`. The effort comes from `output_config.effort` when present, else from
 * the thinking config (a budget by bucket: < 4096 low, < 16384 medium, else high; `adaptive` medium).
 * A summary (`auto`) is asked for whenever thinking is on and not shown as `omitted`: it is what fills
 * the caller's thinking blocks.
 */
function translateReasoning(
  effort: unknown,
  thinking: ThinkingConfig | undefined,
): ResponsesRequest['reasoning'] | undefined {
  const reasoning: NonNullable<ResponsesRequest['reasoning']> = {};
  const fromEffort = translateEffort(effort);
  const isThinking = thinking?.type === 'enabled' || thinking?.type === 'adaptive';
  let fromThinking: string | undefined;
  if (thinking?.type === 'enabled') {
    const budget = thinking['budget_tokens'];
    if (typeof budget !== 'number' || !Number.isFinite(budget)) {
      invalid('thinking.budget_tokens must be a number when thinking.type is "enabled"');
    }
    fromThinking = budget < MEDIUM_EFFORT_BUDGET ? 'low' : budget < HIGH_EFFORT_BUDGET ? 'medium' : 'high';
  } else if (thinking?.type === 'adaptive') {
    fromThinking = 'medium';
  }
  const chosen = fromEffort ?? fromThinking;
  if (chosen !== undefined) reasoning.effort = chosen;
  if (isThinking && thinking?.['display'] !== 'omitted') reasoning.summary = 'auto';
  return Object.keys(reasoning).length > 0 ? reasoning : undefined;
}

function translateEffort(effort: unknown): string | undefined {
  if (effort === undefined || effort === null) return undefined;
  switch (effort) {
    case 'low':
      return 'low';
    case 'medium':
      return 'medium';
    case 'high':
      return 'high';
    // Compatible servers know low/medium/high: the top two levels become the highest, as on Chat Completions.
    case 'xhigh':
    case 'max':
      return 'high';
    default:
      return invalid(
        `output_config.effort ${JSON.stringify(effort)} is not one of "low", "medium", "high", "xhigh", "max"`,
      );
  }
}

function translateOutputFormat(format: unknown): NonNullable<ResponsesRequest['text']>['format'] | undefined {
  if (format === undefined || format === null) return undefined;
  if (!isObject(format) || format['type'] !== 'json_schema') {
    const type = isObject(format) ? JSON.stringify(format['type']) : typeof format;
    invalid(
      `output_config.format of type ${type} cannot be translated; only {"type": "json_schema", "schema": {…}} ` +
        'has a Responses API equivalent (text.format)',
    );
  }
  const schema = format['schema'];
  if (!isObject(schema)) invalid('output_config.format.schema must be a JSON Schema object');
  return { type: 'json_schema', name: 'output', schema, strict: true };
}

// ---------------------------------------------------------------------------------------------------
// Tools

/**
 * Server tools run on Anthropic's side and are refused; Anthropic-defined client tools (`bash_*`,
 * `text_editor_*`, …) are run by the caller and pass, with their documented schema
 * (`anthropic-client-tools.ts`), as on the Chat Completions wire.
 */
function rejectServerTools(tools: readonly ToolParam[]): void {
  tools.forEach((tool, index) => {
    if (tool.type === undefined || tool.type === null || tool.type === 'custom') return;
    if (anthropicClientTool(tool) !== undefined) return;
    invalid(
      `tools[${index}] (${JSON.stringify(tool.name)}) has type ${JSON.stringify(tool.type)}: server tools and ` +
        "Anthropic-defined tools run on Anthropic's side and have no Responses API equivalent here; remove it, " +
        'or use the anthropic provider',
    );
  });
}

function translateTool(tool: ToolParam, toolNames: ToolNameMap): ResponsesFunctionTool {
  const name = toolNames.toUpstream(tool.name);
  const clientTool = anthropicClientTool(tool);
  if (clientTool !== undefined) {
    // The documented schema: the caller sent only the type, which a model other than Claude cannot know.
    return {
      type: 'function',
      name,
      description: clientTool.description,
      parameters: { ...clientTool.input_schema },
      strict: false,
    };
  }
  const translated: ResponsesFunctionTool = {
    type: 'function',
    name,
    parameters: isObject(tool.input_schema) ? tool.input_schema : { type: 'object', properties: {} },
    strict: tool['strict'] === true,
  };
  if (typeof tool.description === 'string') translated.description = tool.description;
  return translated;
}

/**
 * The Chat Completions choice (`translate-tool-choice.ts`, with its refusals) in the Responses shape, which
 * names a forced function at the top level instead of under `function`.
 */
function translateResponsesToolChoice(
  choice: ToolChoice,
  tools: readonly ToolParam[],
  toolNames: ToolNameMap,
): { toolChoice: ResponsesToolChoice; parallelToolCalls: boolean | undefined } | undefined {
  const translated = translateToolChoice(choice, tools, toolNames);
  if (translated === undefined) return undefined;
  const { toolChoice, parallelToolCalls } = translated;
  return {
    toolChoice:
      typeof toolChoice === 'string' ? toolChoice : { type: 'function', name: toolChoice.function.name },
    parallelToolCalls,
  };
}

// ---------------------------------------------------------------------------------------------------
// Input items

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
 * Walks the merged turns in order. The answers to an assistant turn's tool calls follow its
 * `function_call` items directly (taken from the next user turn, even across system messages in
 * between), as on the Chat Completions wire; everything else keeps its order.
 */
function translateInput(request: MessagesRequest, toolNames: ToolNameMap): ResponsesInputItem[] {
  if (request.messages.length === 0) invalid('messages must contain at least one message');
  const items: ResponsesInputItem[] = [];
  const turns = dropBlankPrefill(mergeTurns(request.messages));
  const answered = new Set<PositionedBlock>();

  turns.forEach((turn, turnIndex) => {
    switch (turn.role) {
      case 'system': {
        const text = systemTurnText(turn);
        if (text !== '')
          items.push({ type: 'message', role: 'system', content: [{ type: 'input_text', text }] });
        return;
      }
      case 'assistant': {
        const assistantItems = translateAssistantTurn(turn, toolNames);
        items.push(...assistantItems);
        if (!assistantItems.some((item) => item.type === 'function_call')) return;
        const next = turns.slice(turnIndex + 1).find((later) => later.role !== 'system');
        const results =
          next?.role === 'user'
            ? next.blocks.filter((positioned) => positioned.block.type === 'tool_result')
            : [];
        results.forEach((positioned) => answered.add(positioned));
        items.push(...results.map(translateToolResult));
        return;
      }
      case 'user': {
        const unanswered = turn.blocks.filter(
          (positioned) => positioned.block.type === 'tool_result' && !answered.has(positioned),
        );
        items.push(...unanswered.map(translateToolResult));
        const rest = turn.blocks.filter((positioned) => positioned.block.type !== 'tool_result');
        const isOnlyToolResults = rest.length === 0 && turn.blocks.length > 0;
        if (!isOnlyToolResults) {
          const content = rest.map(translateUserBlock);
          items.push({
            type: 'message',
            role: 'user',
            content: content.length > 0 ? content : [{ type: 'input_text', text: '' }],
          });
        }
        return;
      }
      default: {
        const unknown: never = turn.role;
        invalid(`messages[${turn.messageIndex}] has an unknown role ${JSON.stringify(unknown)}`);
      }
    }
  });
  if (items.length === 0)
    invalid('messages holds nothing to send: its only message is a blank assistant message');
  return items;
}

/** A final assistant turn is a prefill, which the Responses API cannot continue; a blank one is dropped. */
function dropBlankPrefill(turns: Turn[]): Turn[] {
  const last = turns.at(-1);
  if (last === undefined || last.role !== 'assistant') return turns;
  const isBlank = last.blocks.every(
    ({ block }) => block.type === 'text' && typeof block['text'] === 'string' && block['text'].trim() === '',
  );
  if (!isBlank) {
    invalid(
      `messages[${last.messageIndex}]: the request ends with an assistant message (a prefill), and prefill is ` +
        'not supported by the Responses API; end the request with a user message',
    );
  }
  return turns.slice(0, -1);
}

function systemTurnText(turn: Turn): string {
  return turn.blocks
    .map((positioned) => {
      const { block } = positioned;
      if (block.type !== 'text') {
        invalid(
          `${blockPath(positioned)} is a ${JSON.stringify(block.type)} block in a system message; only text can be translated`,
        );
      }
      if (typeof block['text'] !== 'string') {
        invalid(`${blockPath(positioned)}.text must be a string (a text block in a system message)`);
      }
      return block['text'];
    })
    .join('\n\n');
}

/**
 * An assistant turn's blocks, in order: reasoning items (from signed thinking blocks), one assistant
 * message per run of text blocks, one `function_call` per tool_use.
 */
function translateAssistantTurn(turn: Turn, toolNames: ToolNameMap): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  let texts: ResponsesOutputText[] = [];
  const flushTexts = (): void => {
    if (texts.length > 0) items.push({ type: 'message', role: 'assistant', content: texts });
    texts = [];
  };
  for (const positioned of turn.blocks) {
    const { block } = positioned;
    switch (block.type) {
      case 'text':
        texts.push({ type: 'output_text', text: String(block['text']), annotations: [] });
        break;
      case 'thinking': {
        const signature = block['signature'];
        const reference = typeof signature === 'string' ? decodeReasoningSignature(signature) : undefined;
        // Unsigned thinking (Anthropic's, or the Chat Completions wire's) cannot be restored: dropped.
        if (reference === undefined) break;
        flushTexts();
        const text = typeof block['thinking'] === 'string' ? block['thinking'] : '';
        items.push({
          type: 'reasoning',
          ...(reference.id === undefined ? {} : { id: reference.id }),
          summary: reference.source === 'summary' && text !== '' ? [{ type: 'summary_text', text }] : [],
          content: reference.source === 'content' && text !== '' ? [{ type: 'reasoning_text', text }] : [],
          ...(reference.encryptedContent === undefined
            ? {}
            : { encrypted_content: reference.encryptedContent }),
        });
        break;
      }
      case 'redacted_thinking':
        // Encrypted for Anthropic only. Dropped.
        break;
      case 'tool_use':
        flushTexts();
        items.push({
          type: 'function_call',
          call_id: decodeToolId(String(block['id'])),
          name: toolNames.toUpstream(String(block['name'])),
          arguments: stringifyExactJson(block['input'] ?? {}),
        });
        break;
      case 'image':
      case 'document':
        invalid(
          `${blockPath(positioned)}: the Responses API does not accept ${block.type} blocks in assistant messages`,
        );
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
  flushTexts();
  return items;
}

function translateUserBlock(positioned: PositionedBlock): ResponsesInputContent {
  const { block } = positioned;
  switch (block.type) {
    case 'text':
      return { type: 'input_text', text: String(block['text']) };
    case 'image':
      return translateImage(block['source'], blockPath(positioned));
    case 'document':
      return translateDocument(block as Record<string, unknown>, blockPath(positioned));
    case 'search_result':
      // The same text the Chat Completions wire sends (title, source, then the content).
      return { type: 'input_text', text: mapSearchResultBlock(block, blockPath(positioned)).text };
    case 'tool_use':
    case 'thinking':
    case 'redacted_thinking':
      return invalid(
        `${blockPath(positioned)}: ${block.type} blocks belong in assistant messages, not user messages`,
      );
    default:
      return untranslatable(positioned);
  }
}

function translateImage(source: unknown, path: string): ResponsesInputImage {
  if (isObject(source)) {
    if (
      source['type'] === 'base64' &&
      typeof source['media_type'] === 'string' &&
      typeof source['data'] === 'string'
    ) {
      return {
        type: 'input_image',
        image_url: `data:${source['media_type']};base64,${source['data']}`,
        detail: 'auto',
      };
    }
    if (source['type'] === 'url' && typeof source['url'] === 'string') {
      return { type: 'input_image', image_url: source['url'], detail: 'auto' };
    }
  }
  const type = isObject(source) ? JSON.stringify(source['type']) : typeof source;
  return invalid(
    `${path}: an image with source type ${type} cannot be translated; use a base64 or url source`,
  );
}

/**
 * A plain-text document becomes text (its title, a newline, its data); a base64 PDF an `input_file` with
 * a `data:` URL, a URL PDF an `input_file` with `file_url`.
 */
function translateDocument(block: Record<string, unknown>, path: string): ResponsesInputContent {
  const source = block['source'];
  const title = typeof block['title'] === 'string' && block['title'] !== '' ? block['title'] : undefined;
  if (isObject(source)) {
    if (source['type'] === 'text' && typeof source['data'] === 'string') {
      return {
        type: 'input_text',
        text: title === undefined ? source['data'] : `${title}\n${source['data']}`,
      };
    }
    if (source['type'] === 'base64' && typeof source['data'] === 'string') {
      const mediaType = typeof source['media_type'] === 'string' ? source['media_type'] : 'application/pdf';
      return {
        type: 'input_file',
        filename: title ?? 'document.pdf',
        file_data: `data:${mediaType};base64,${source['data']}`,
      };
    }
    if (source['type'] === 'url' && typeof source['url'] === 'string') {
      return { type: 'input_file', file_url: source['url'] };
    }
  }
  const type = isObject(source) ? JSON.stringify(source['type']) : typeof source;
  return invalid(
    `${path}: a document with source type ${type} cannot be translated; use a text, base64 or url source`,
  );
}

function untranslatable(positioned: PositionedBlock): never {
  invalid(
    `${blockPath(positioned)}: a ${JSON.stringify(positioned.block.type)} block cannot be translated to the ` +
      'Responses API; remove it, or use the anthropic provider',
  );
}

/**
 * A `tool_result` → `function_call_output`. Text-only content is a string; content with images or files
 * is a list of input parts. `is_error: true` has no field of its own: the text gets the prefix
 * `"[tool error] "`, as on the Chat Completions wire.
 */
function translateToolResult(positioned: PositionedBlock): ResponsesInputItem {
  const block = positioned.block as Record<string, unknown>;
  const path = blockPath(positioned);
  const callId = decodeToolId(String(block['tool_use_id']));
  const isError = block['is_error'] === true;
  const content = block['content'];
  if (content === undefined || content === null || typeof content === 'string') {
    const text = typeof content === 'string' ? content : '';
    return {
      type: 'function_call_output',
      call_id: callId,
      output: isError ? `${TOOL_ERROR_PREFIX}${text}` : text,
    };
  }
  if (!Array.isArray(content)) invalid(`${path}.content must be a string or an array of blocks`);
  const parts: ResponsesInputContent[] = content.map((inner: unknown, index): ResponsesInputContent => {
    const innerPath = `${path}.content[${index}]`;
    if (!isObject(inner)) return invalid(`${innerPath} must be a content block`);
    switch (inner['type']) {
      case 'text':
        return { type: 'input_text', text: String(inner['text']) };
      case 'image':
        return translateImage(inner['source'], innerPath);
      case 'document':
        return translateDocument(inner, innerPath);
      case 'search_result':
        return { type: 'input_text', text: mapSearchResultBlock(inner, innerPath).text };
      default:
        return invalid(
          `${innerPath}: a ${JSON.stringify(inner['type'])} block inside a tool_result cannot be translated to ` +
            'the Responses API; remove it, or use the anthropic provider',
        );
    }
  });
  if (parts.every((part) => part.type === 'input_text')) {
    const text = parts.map((part) => (part as { text: string }).text).join('\n');
    return {
      type: 'function_call_output',
      call_id: callId,
      output: isError ? `${TOOL_ERROR_PREFIX}${text}` : text,
    };
  }
  if (isError) parts.unshift({ type: 'input_text', text: TOOL_ERROR_PREFIX.trim() });
  return { type: 'function_call_output', call_id: callId, output: parts };
}
