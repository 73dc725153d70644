/**
 * Context editing done locally: the `context_management.edits` of a request, applied to its messages
 * before translation with the semantics Anthropic documents for its server-side editing
 * (platform.claude.com/docs/en/build-with-claude/context-editing), so a client that relies on it gets
 * it from any upstream. Pure: the token counter is injected, the caller's request is not changed.
 *
 * | edit                       | option            | default                           | meaning |
 * |----------------------------|-------------------|-----------------------------------|---------|
 * | `clear_tool_uses_20250919` | `trigger`         | `{type:"input_tokens",value:100000}` | clear only when the prompt is over this many input tokens (estimated), or (`tool_uses`) holds more than this many tool uses |
 * |                            | `keep`            | `{type:"tool_uses",value:3}`      | the most recent tool uses whose results stay |
 * |                            | `clear_at_least`  | none                              | `{type:"input_tokens",value}`: clear nothing unless clearing frees at least this many tokens |
 * |                            | `exclude_tools`   | none                              | tool names whose uses are never cleared |
 * |                            | `clear_tool_inputs` | `false`                         | also clear the calls' inputs (`true`), or those of the named tools (a list) |
 * | `clear_thinking_20251015`  | `keep`            | `{type:"thinking_turns",value:1}` | the most recent assistant turns whose thinking stays; `"all"` keeps every one |
 *
 * Clearing keeps pairing intact: a cleared `tool_result` keeps its `tool_use_id` and gets the content
 * {@link CLEARED_TOOL_RESULT}; a cleared `tool_use` keeps its id and name and gets the input `{}`.
 * Cleared thinking blocks (and redacted thinking) are removed from the assistant message.
 *
 * What was done is reported as Anthropic reports it, in the response's `context_management`:
 * `{applied_edits: [{type, cleared_tool_uses, cleared_input_tokens}, {type, cleared_thinking_turns,
 * cleared_input_tokens}]}`, one entry per edit that cleared something. Token figures are the same
 * conservative estimate `count_tokens` gives.
 *
 * Edits that cannot be done locally are refused: `compact_*` (server-side compaction asks the model for
 * a summary, a second exchange the caller did not ask for) and types this library does not know.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { MessageParam, MessagesRequest } from '../protocol/messages.js';
import { estimateInputTokens, PER_MESSAGE_TOKENS, type CountTextTokens } from './estimate-input-tokens.js';
import { isObject } from '../protocol/is-object.js';

/** The content a cleared tool result gets, so the model knows something was there. */
export const CLEARED_TOOL_RESULT = '[This tool result was cleared to save context.]';

/** The tool-use clearing edit's type. */
export const CLEAR_TOOL_USES = 'clear_tool_uses_20250919';
/** The thinking clearing edit's type. */
export const CLEAR_THINKING = 'clear_thinking_20251015';

const DEFAULT_TRIGGER_INPUT_TOKENS = 100_000;
const DEFAULT_KEEP_TOOL_USES = 3;
const DEFAULT_KEEP_THINKING_TURNS = 1;

/** One entry of `context_management.applied_edits` in a response. */
export type AppliedContextEdit =
  | { type: typeof CLEAR_TOOL_USES; cleared_tool_uses: number; cleared_input_tokens: number }
  | { type: typeof CLEAR_THINKING; cleared_thinking_turns: number; cleared_input_tokens: number };

/** The request with the edits applied, and what to report. */
export interface ContextEditOutcome {
  /** The request to translate: edited messages, no `context_management`. */
  request: MessagesRequest;
  /** `undefined` when the request asked for no context management (the response then has none). */
  appliedEdits: AppliedContextEdit[] | undefined;
}

type Block = Record<string, unknown>;

function invalid(message: string): never {
  throw new TransportError('MODEL_EINVAL', message);
}

/** What {@link applyContextEdits} may be told besides the request. */
export interface ContextEditOptions {
  /**
   * The request's estimated input tokens, for the `input_tokens` trigger, when the caller has counted
   * them already (without holding the event loop); otherwise they are counted here with `countText`.
   */
  inputTokens?: number;
}

/** Whether a request's edits need a token counter (so callers load one only then). */
export function needsTokenCounter(request: MessagesRequest): boolean {
  const edits = editsOf(request);
  return edits.some((edit) => edit['type'] === CLEAR_TOOL_USES);
}

/**
 * Applies the request's `context_management.edits`, in order.
 *
 * @param countText counts the tokens of a string (see `estimate-input-tokens.ts`); only called for
 *   tool-use clearing.
 * @throws TransportError `MODEL_EINVAL` naming the edit, for `compact_*` and unknown edit types and for
 *   malformed options.
 *
 * @example
 * applyContextEdits(
 *   { ...request, context_management: { edits: [{ type: 'clear_thinking_20251015' }] } },
 *   countText,
 * ).appliedEdits // → [{ type: 'clear_thinking_20251015', cleared_thinking_turns: 2, cleared_input_tokens: 180 }]
 */
export function applyContextEdits(
  request: MessagesRequest,
  countText: CountTextTokens,
  options: ContextEditOptions = {},
): ContextEditOutcome {
  const { context_management: contextManagement, ...rest } = request;
  if (contextManagement === undefined || contextManagement === null) {
    return { request, appliedEdits: undefined };
  }
  const edits = editsOf(request);
  edits.forEach((edit, index) => checkEdit(edit, index, edits));
  let messages = request.messages;
  const applied: AppliedContextEdit[] = [];
  edits.forEach((edit, index) => {
    const path = `context_management.edits[${index}]`;
    const result =
      edit['type'] === CLEAR_THINKING
        ? clearThinking(messages, edit, path, countText)
        : clearToolUses(
            { ...rest, messages },
            edit,
            path,
            countText,
            messages === request.messages ? options.inputTokens : undefined,
          );
    if (result !== undefined) {
      messages = result.messages;
      applied.push(result.applied);
    }
  });
  return { request: { ...rest, messages }, appliedEdits: applied };
}

function editsOf(request: MessagesRequest): Block[] {
  const contextManagement: unknown = request['context_management'];
  if (contextManagement === undefined || contextManagement === null) return [];
  if (!isObject(contextManagement)) invalid('context_management must be an object');
  const edits = contextManagement['edits'];
  if (edits === undefined || edits === null) return [];
  if (!Array.isArray(edits)) invalid('context_management.edits must be an array');
  return edits.map((edit: unknown, index) => {
    if (!isObject(edit)) invalid(`context_management.edits[${index}] must be an object`);
    return edit;
  });
}

function checkEdit(edit: Block, index: number, edits: readonly Block[]): void {
  const path = `context_management.edits[${index}]`;
  const type = edit['type'];
  if (type === CLEAR_TOOL_USES) return;
  if (type === CLEAR_THINKING) {
    // Anthropic's rule: thinking is cleared first, so tool-use clearing counts what remains.
    if (edits.slice(0, index).some((earlier) => earlier['type'] === CLEAR_TOOL_USES)) {
      invalid(`${path}: ${CLEAR_THINKING} must come before ${CLEAR_TOOL_USES} in context_management.edits`);
    }
    return;
  }
  if (typeof type === 'string' && type.startsWith('compact_')) {
    invalid(
      `${path} has type ${JSON.stringify(type)}: compaction asks the model for a summary on Anthropic's side, ` +
        'which the tpx provider cannot do within one exchange; remove it (clear_tool_uses_20250919 and ' +
        'clear_thinking_20251015 are applied locally), or use the anthropic provider',
    );
  }
  invalid(
    `${path} has type ${JSON.stringify(type)}, which the tpx provider cannot apply; it applies ` +
      `${CLEAR_TOOL_USES} and ${CLEAR_THINKING}`,
  );
}

/** A `{type, value}` option with a non-negative integer value of the given types, or the default. */
function amount(
  edit: Block,
  key: string,
  path: string,
  types: readonly string[],
): { type: string; value: number } | undefined {
  const option = edit[key];
  if (option === undefined || option === null) return undefined;
  const value = isObject(option) ? option['value'] : undefined;
  if (
    !isObject(option) ||
    !types.includes(String(option['type'])) ||
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < 0
  ) {
    invalid(
      `${path}.${key} must be {"type": ${types.map((type) => JSON.stringify(type)).join(' or ')}, ` +
        '"value": a non-negative integer}',
    );
  }
  return { type: String(option['type']), value };
}

// ---------------------------------------------------------------------------------------------------
// Thinking

function clearThinking(
  messages: readonly MessageParam[],
  edit: Block,
  path: string,
  countText: CountTextTokens,
): { messages: MessageParam[]; applied: AppliedContextEdit } | undefined {
  let keepTurns = DEFAULT_KEEP_THINKING_TURNS;
  if (edit['keep'] === 'all') return undefined;
  const keep = amount(edit, 'keep', path, ['thinking_turns']);
  if (keep !== undefined) keepTurns = keep.value;

  const isThinking = (block: unknown) =>
    isObject(block) && (block['type'] === 'thinking' || block['type'] === 'redacted_thinking');
  const turnsWithThinking = messages.flatMap((message, index) =>
    message.role === 'assistant' && Array.isArray(message.content) && message.content.some(isThinking)
      ? [index]
      : [],
  );
  const cleared = new Set(turnsWithThinking.slice(0, Math.max(0, turnsWithThinking.length - keepTurns)));
  if (cleared.size === 0) return undefined;

  const removed: unknown[] = [];
  const edited = messages.map((message, index) => {
    if (!cleared.has(index) || !Array.isArray(message.content)) return message;
    removed.push(...message.content.filter(isThinking));
    return { ...message, content: message.content.filter((block) => !isThinking(block)) };
  });
  return {
    messages: edited,
    applied: {
      type: CLEAR_THINKING,
      cleared_thinking_turns: cleared.size,
      cleared_input_tokens: contentTokens(removed, countText),
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Tool uses

/** A tool use of the conversation and where its result is. */
interface ToolUse {
  messageIndex: number;
  blockIndex: number;
  id: string;
  name: string;
  input: unknown;
  result: { messageIndex: number; blockIndex: number; content: unknown } | undefined;
}

function clearToolUses(
  request: MessagesRequest,
  edit: Block,
  path: string,
  countText: CountTextTokens,
  inputTokens: number | undefined,
): { messages: MessageParam[]; applied: AppliedContextEdit } | undefined {
  const trigger = amount(edit, 'trigger', path, ['input_tokens', 'tool_uses']) ?? {
    type: 'input_tokens',
    value: DEFAULT_TRIGGER_INPUT_TOKENS,
  };
  const keep = amount(edit, 'keep', path, ['tool_uses'])?.value ?? DEFAULT_KEEP_TOOL_USES;
  const clearAtLeast = amount(edit, 'clear_at_least', path, ['input_tokens'])?.value ?? 0;
  const excluded = new Set(namesOption(edit, 'exclude_tools', path) ?? []);
  const clearInputs = edit['clear_tool_inputs'];
  const inputsCleared: (name: string) => boolean =
    clearInputs === true
      ? () => true
      : Array.isArray(clearInputs)
        ? (name) => (namesOption(edit, 'clear_tool_inputs', path) ?? []).includes(name)
        : clearInputs === undefined || clearInputs === null || clearInputs === false
          ? () => false
          : invalid(`${path}.clear_tool_inputs must be a boolean or an array of tool names`);

  const toolUses = findToolUses(request.messages);
  const triggered =
    trigger.type === 'tool_uses'
      ? toolUses.length > trigger.value
      : (inputTokens ?? estimateInputTokens(request, countText)) > trigger.value;
  if (!triggered) return undefined;

  const candidates = toolUses
    .slice(0, Math.max(0, toolUses.length - keep))
    .filter((use) => !excluded.has(use.name))
    // A result the client already sends cleared frees nothing more.
    .filter((use) => !(use.result?.content === CLEARED_TOOL_RESULT));
  if (candidates.length === 0) return undefined;

  const removed: unknown[] = [];
  for (const use of candidates) {
    const content = use.result?.content;
    if (Array.isArray(content)) removed.push(...(content as unknown[]));
    else if (use.result !== undefined) removed.push(content ?? '');
    if (inputsCleared(use.name)) removed.push(use.input);
  }
  const placeholders = candidates.filter((use) => use.result !== undefined).map(() => CLEARED_TOOL_RESULT);
  const clearedTokens = Math.max(
    0,
    contentTokens(removed, countText) - contentTokens(placeholders, countText),
  );
  if (clearedTokens < clearAtLeast) return undefined;

  return {
    messages: clearCandidates(request.messages, candidates, inputsCleared),
    applied: {
      type: CLEAR_TOOL_USES,
      cleared_tool_uses: candidates.length,
      cleared_input_tokens: clearedTokens,
    },
  };
}

function namesOption(edit: Block, key: string, path: string): string[] | undefined {
  const names = edit[key];
  if (names === undefined || names === null) return undefined;
  if (!Array.isArray(names) || !names.every((name) => typeof name === 'string')) {
    invalid(`${path}.${key} must be an array of tool names`);
  }
  return names;
}

/** Every `tool_use` of the assistant messages, in order, each with its `tool_result` when there is one. */
function findToolUses(messages: readonly MessageParam[]): ToolUse[] {
  const uses: ToolUse[] = [];
  const byId = new Map<string, ToolUse>();
  messages.forEach((message, messageIndex) => {
    if (!Array.isArray(message.content)) return;
    message.content.forEach((block: unknown, blockIndex) => {
      if (!isObject(block)) return;
      if (message.role === 'assistant' && block['type'] === 'tool_use') {
        const use: ToolUse = {
          messageIndex,
          blockIndex,
          id: String(block['id']),
          name: String(block['name']),
          input: block['input'],
          result: undefined,
        };
        uses.push(use);
        byId.set(use.id, use);
      } else if (message.role === 'user' && block['type'] === 'tool_result') {
        const use = byId.get(String(block['tool_use_id']));
        if (use !== undefined && use.result === undefined) {
          use.result = { messageIndex, blockIndex, content: block['content'] };
        }
      }
    });
  });
  return uses;
}

function clearCandidates(
  messages: readonly MessageParam[],
  candidates: readonly ToolUse[],
  inputsCleared: (name: string) => boolean,
): MessageParam[] {
  const edits = new Map<string, (block: Block) => Block>();
  const at = (messageIndex: number, blockIndex: number) => `${messageIndex}:${blockIndex}`;
  for (const use of candidates) {
    if (inputsCleared(use.name)) {
      edits.set(at(use.messageIndex, use.blockIndex), (block) => ({ ...block, input: {} }));
    }
    if (use.result !== undefined) {
      edits.set(at(use.result.messageIndex, use.result.blockIndex), (block) => ({
        ...block,
        content: CLEARED_TOOL_RESULT,
      }));
    }
  }
  return messages.map((message, messageIndex) => {
    if (!Array.isArray(message.content)) return message;
    let changed = false;
    const content = message.content.map((block, blockIndex) => {
      const edit = edits.get(at(messageIndex, blockIndex));
      if (edit === undefined) return block;
      changed = true;
      return edit(block as unknown as Block) as unknown as typeof block;
    });
    return changed ? { ...message, content } : message;
  });
}

/**
 * The estimated tokens of some content (blocks, strings, tool inputs), counted as the content of one
 * message without that message's framing.
 */
function contentTokens(content: readonly unknown[], countText: CountTextTokens): number {
  if (content.length === 0) return 0;
  const blocks = content.map((item) =>
    typeof item === 'string'
      ? { type: 'text', text: item }
      : isObject(item) && typeof item['type'] === 'string'
        ? item
        : { type: 'text', text: JSON.stringify(item ?? {}) },
  );
  const messages = [{ role: 'user', content: blocks }];
  return Math.max(0, estimateInputTokens({ messages }, countText) - PER_MESSAGE_TOKENS);
}
