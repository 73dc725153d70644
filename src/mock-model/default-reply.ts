/**
 * The mock model's default behaviour, used when no scripted reply is left. It is deterministic and
 * ends any agent loop — also one driven by an agent with dangerous tools, such as Claude Code — in two
 * steps:
 *
 * 1. When tools are offered, `tool_choice` is not `"none"`, and no tool was called yet in the whole
 *    conversation (no assistant message with `tool_calls`), it calls tools, at most one round per
 *    conversation. Which tools: tools whose names look like they act (`Agent`, `Task`, `Bash`, `Write`,
 *    `Edit`, `Delete`, `WebFetch`, …) are never called by default; among the rest the read-only-looking
 *    ones (`Read`, `Grep`, `Glob`, `list_…`, `get_…`) come first. Up to 4 in parallel; only the first
 *    with `parallel_tool_calls: false`; only the named one when `tool_choice` names a function (called
 *    whatever its name: the caller asked for it); only the listed ones for `allowed_tools`. Arguments
 *    fill only each tool's required fields, booleans `false` (see `schema-example.ts`). Finish reason
 *    `tool_calls`.
 * 2. Otherwise it answers in text: `The tools answered: add → 5; now → 2026-…` when the turn holds
 *    tool results (each paired with its call's function name from the assistant message before them),
 *    else `You said: …` with a short summary of the last user message. Finish reason `stop`.
 *
 * Step 2 follows any tool round even under `tool_choice: "required"`, so that a loop always ends.
 *
 * @module
 */
import type { IncomingChatMessage, MockRequest, OfferedTool } from './mock-request.js';
import type { Completion } from './completion.js';
import { exampleArguments } from './schema-example.js';
import { isObject } from '../protocol/is-object.js';

/** At most this many tools are called at once. */
const MAX_PARALLEL_CALLS = 4;
const MAX_RESULT_LENGTH = 80;
const MAX_ECHO_LENGTH = 120;

/**
 * The default answer to `request`.
 *
 * @param nextToolCallId gives a fresh, unique tool-call id on each call
 */
export function defaultCompletion(request: MockRequest, nextToolCallId: () => string): Completion {
  const turn = currentTurn(request.messages);
  const hasToolResults = turn.some((message) => message.role === 'tool');
  if (!hasCalledTools(request.messages)) {
    const tools = toolsToCall(request);
    if (tools.length > 0) {
      return {
        reasoning: null,
        text: null,
        toolCalls: tools.map((tool) => ({
          id: nextToolCallId(),
          name: tool.name,
          arguments: JSON.stringify(exampleArguments(tool.parameters)),
        })),
        finishReason: 'tool_calls',
      };
    }
  }
  const text = hasToolResults ? describeToolResults(request.messages) : echoLastUserMessage(request.messages);
  return { reasoning: null, text, toolCalls: [], finishReason: 'stop' };
}

/** The tools the default behaviour calls, in the order they were offered. */
export function toolsToCall(request: MockRequest): OfferedTool[] {
  const choice = request.toolChoice;
  const limit = request.parallelToolCalls ? MAX_PARALLEL_CALLS : 1;
  let tools: OfferedTool[];
  switch (choice.mode) {
    case 'none':
      return [];
    case 'auto':
    case 'required':
      tools = safeToolsFirst(request.tools, limit);
      break;
    case 'named':
      tools = request.tools.filter((tool) => tool.name === choice.name).slice(0, 1);
      break;
    case 'allowed':
      tools = safeToolsFirst(
        request.tools.filter((tool) => choice.names.includes(tool.name)),
        limit,
      );
      break;
    default: {
      const unreachable: never = choice;
      return unreachable;
    }
  }
  return tools.slice(0, limit);
}

/** Name words of tools that act on the world or start more work: never called by default. */
const ACTING_WORDS =
  /(agent|task|bash|shell|exec|run|command|write|edit|delete|remove|rm|kill|move|rename|create|update|install|notebook|web|fetch|post|send|exit|mode|todo|deploy|push|commit)/i;
/** Name words of tools that only look: called first. */
const LOOKING_WORDS =
  /(read|get|list|ls|glob|grep|search|find|view|show|cat|status|describe|lookup|query|now|time)/i;

/** The words of a tool name: `list_files` → list, files; `WebFetch` → web, fetch; `LS` → ls. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '')
    .map((word) => word.toLowerCase());
}

function hasWord(name: string, words: RegExp): boolean {
  const anchored = new RegExp(`^${words.source}$`, 'i');
  return nameWords(name).some((word) => anchored.test(word));
}

/**
 * The tools that may be called by default: none that act; when more remain than `limit`, the looking
 * ones are taken first. The chosen ones keep their offered order.
 */
function safeToolsFirst(tools: readonly OfferedTool[], limit: number): OfferedTool[] {
  const safe = tools.filter((tool) => !hasWord(tool.name, ACTING_WORDS));
  const looking = safe.filter((tool) => hasWord(tool.name, LOOKING_WORDS));
  const chosen = new Set([...looking, ...safe].slice(0, limit));
  return safe.filter((tool) => chosen.has(tool));
}

/** Whether the model called a tool anywhere in the conversation so far. */
function hasCalledTools(messages: readonly IncomingChatMessage[]): boolean {
  return messages.some((message) => {
    const calls = message['tool_calls'];
    return message.role === 'assistant' && Array.isArray(calls) && calls.length > 0;
  });
}

/** The messages after the last assistant message: what the model is now answering. */
function currentTurn(messages: readonly IncomingChatMessage[]): readonly IncomingChatMessage[] {
  const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant');
  return messages.slice(lastAssistant + 1);
}

function describeToolResults(messages: readonly IncomingChatMessage[]): string {
  const lastAssistantIndex = messages.findLastIndex((message) => message.role === 'assistant');
  const names = new Map<string, string>();
  const toolCalls = messages[lastAssistantIndex]?.['tool_calls'];
  if (Array.isArray(toolCalls)) {
    for (const call of toolCalls) {
      if (!isObject(call) || typeof call['id'] !== 'string') continue;
      const definition = call['function'];
      if (isObject(definition) && typeof definition['name'] === 'string')
        names.set(call['id'], definition['name']);
    }
  }
  const answers = messages
    .slice(lastAssistantIndex + 1)
    .filter((message) => message.role === 'tool')
    .map((message) => {
      const id = message['tool_call_id'];
      const name =
        (typeof id === 'string' ? names.get(id) : undefined) ?? (typeof id === 'string' ? id : 'a tool');
      return `${name} → ${summarise(contentText(message['content']), MAX_RESULT_LENGTH) || '(empty)'}`;
    });
  return `The tools answered: ${answers.join('; ')}`;
}

function echoLastUserMessage(messages: readonly IncomingChatMessage[]): string {
  const lastUser = messages.findLast((message) => message.role === 'user');
  const summary = lastUser === undefined ? '' : summarise(contentText(lastUser['content']), MAX_ECHO_LENGTH);
  return summary === '' ? 'You said nothing.' : `You said: ${summary}`;
}

/** The text of a message's `content`: a string, or the text parts of an array (`[image]` for images). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const pieces: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') pieces.push(part);
    else if (isObject(part) && typeof part['text'] === 'string') pieces.push(part['text']);
    else if (isObject(part) && part['type'] === 'image_url') pieces.push('[image]');
  }
  return pieces.join(' ');
}

/** Collapses whitespace and cuts `text` to `maxLength` code points, marking a cut with `…`. */
function summarise(text: string, maxLength: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const codePoints = Array.from(flat);
  return codePoints.length <= maxLength ? flat : `${codePoints.slice(0, maxLength - 1).join('')}…`;
}
