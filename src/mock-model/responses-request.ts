/**
 * Reads an incoming Responses API request body (`POST /v1/responses`) for the mock model, and restates
 * it as the conversation the default behaviour reads (`ChatRequest`): `instructions` become a system
 * message, `message` items messages, `function_call` items the calls of an assistant message (with
 * `call_id` as their id), `function_call_output` items tool messages; `reasoning` items are skipped.
 * So both endpoints end agent loops by the same rules. Problems are reported the way OpenAI does
 * (`message`, `param`, `code`); everything else in the body is tolerated and ignored.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import type {
  ChatRequest,
  ChatRequestProblem,
  IncomingChatMessage,
  OfferedTool,
  ReadChatRequestResult,
  ToolChoiceRule,
} from './chat-request.js';

/**
 * Checks `body` (already parsed JSON) as a Responses request and restates it as a chat request.
 *
 * @example
 * readResponsesRequest({ model: 'm' })
 * // → { ok: false, problem: { message: "Missing required parameter: 'input'.", param: 'input', code: 'missing_required_parameter' } }
 */
export function readResponsesRequest(body: unknown): ReadChatRequestResult {
  if (!isObject(body)) {
    return problem('Invalid type for the request body: expected an object.', null, 'invalid_type');
  }
  if (!('input' in body)) {
    return problem("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  }
  const input = body['input'];
  const messages: IncomingChatMessage[] = [];
  const instructions = body['instructions'];
  if (typeof instructions === 'string' && instructions !== '') {
    messages.push({ role: 'system', content: instructions });
  }
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input });
  } else if (Array.isArray(input)) {
    for (const [index, item] of input.entries()) {
      const read = readItem(item, `input[${index}]`, messages);
      if (read !== undefined) return { ok: false, problem: read };
    }
  } else {
    return problem("Invalid type for 'input': expected a string or an array.", 'input', 'invalid_type');
  }

  const tools: OfferedTool[] = [];
  const rawTools = body['tools'];
  if (rawTools !== undefined && rawTools !== null) {
    if (!Array.isArray(rawTools)) {
      return problem("Invalid type for 'tools': expected an array.", 'tools', 'invalid_type');
    }
    for (const [index, tool] of rawTools.entries()) {
      // Only function tools can be called by the mock; hosted tools are ignored.
      if (!isObject(tool) || tool['type'] !== 'function') continue;
      const name = tool['name'];
      if (typeof name !== 'string' || name === '') {
        const param = `tools[${index}].name`;
        return problem(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
      }
      tools.push({ name, parameters: tool['parameters'] });
    }
  }
  const toolChoice = readToolChoice(body['tool_choice'], tools);
  if ('problem' in toolChoice) return { ok: false, problem: toolChoice.problem };

  const request: ChatRequest = {
    messages,
    tools,
    toolChoice: toolChoice.rule,
    parallelToolCalls: body['parallel_tool_calls'] !== false,
    stream: body['stream'] === true,
    includeUsage: true,
    promptCharacters:
      JSON.stringify(input ?? '').length +
      (typeof instructions === 'string' ? instructions.length : 0) +
      (tools.length > 0 ? JSON.stringify(rawTools).length : 0),
  };
  return { ok: true, request };
}

/** Adds what one input item says to `messages`; returns a problem for an item it cannot read. */
function readItem(
  item: unknown,
  param: string,
  messages: IncomingChatMessage[],
): ChatRequestProblem | undefined {
  if (!isObject(item)) {
    return { message: `Invalid type for '${param}': expected an object.`, param, code: 'invalid_type' };
  }
  const type = item['type'] ?? (typeof item['role'] === 'string' ? 'message' : undefined);
  switch (type) {
    case 'message': {
      const role = item['role'];
      if (typeof role !== 'string') {
        return {
          message: `Missing required parameter: '${param}.role'.`,
          param: `${param}.role`,
          code: 'missing_required_parameter',
        };
      }
      messages.push({ role: role === 'developer' ? 'system' : role, content: contentOf(item['content']) });
      return undefined;
    }
    case 'function_call': {
      const call = {
        id: textOf(item['call_id']),
        type: 'function',
        function: { name: textOf(item['name']), arguments: textOf(item['arguments']) },
      };
      const last = messages.at(-1);
      const calls = last?.['tool_calls'];
      // Consecutive calls belong to one assistant turn, as the chat endpoint sees them.
      if (last?.role === 'assistant' && Array.isArray(calls)) calls.push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      return undefined;
    }
    case 'function_call_output': {
      const output = item['output'];
      messages.push({
        role: 'tool',
        tool_call_id: textOf(item['call_id']),
        content: typeof output === 'string' ? output : contentOf(output),
      });
      return undefined;
    }
    case undefined:
    default:
      // `reasoning` items and item types the mock does not act on.
      return undefined;
  }
}

/** Input parts as the chat-shaped parts the default behaviour summarises (text, `[image]`). */
function contentOf(content: unknown): unknown {
  if (typeof content === 'string' || !Array.isArray(content)) return content;
  return content.map((part: unknown) => {
    if (!isObject(part)) return part;
    if (typeof part['text'] === 'string') return { type: 'text', text: part['text'] };
    if (part['type'] === 'input_image') return { type: 'image_url' };
    return part;
  });
}

function readToolChoice(
  value: unknown,
  tools: readonly OfferedTool[],
): { rule: ToolChoiceRule } | { problem: ChatRequestProblem } {
  if (value === undefined || value === null || value === 'auto') return { rule: { mode: 'auto' } };
  if (value === 'none' || value === 'required') return { rule: { mode: value } };
  if (isObject(value) && value['type'] === 'function' && typeof value['name'] === 'string') {
    const name = value['name'];
    if (!tools.some((tool) => tool.name === name)) {
      return {
        problem: {
          message: `Invalid value for 'tool_choice': function '${name}' is not among the offered tools.`,
          param: 'tool_choice',
          code: 'invalid_value',
        },
      };
    }
    return { rule: { mode: 'named', name } };
  }
  if (isObject(value) && value['type'] === 'allowed_tools' && Array.isArray(value['tools'])) {
    const names: string[] = [];
    for (const entry of value['tools']) {
      if (isObject(entry) && typeof entry['name'] === 'string') names.push(entry['name']);
    }
    return { rule: { mode: 'allowed', names } };
  }
  return {
    problem: {
      message: "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or a named function.",
      param: 'tool_choice',
      code: 'invalid_value',
    },
  };
}

/** A string field as it is; anything else as `''`. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function problem(message: string, param: string | null, code: string | null): ReadChatRequestResult {
  return { ok: false, problem: { message, param, code } };
}
