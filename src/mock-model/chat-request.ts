/**
 * Reads an incoming Chat Completions request body for the mock model: checks the fields the mock relies
 * on and reports a problem the way OpenAI does (`message`, `param`, `code`). Everything else in the body
 * is tolerated and ignored, as a lenient compatible server would.
 *
 * @module
 */

import { isObject } from '../protocol/is-object.js';

/** A message as received; only `role` is checked. */
export type IncomingChatMessage = Record<string, unknown> & { role: string };

/** A function tool offered by the request. */
export interface OfferedTool {
  name: string;
  /** The tool's JSON Schema, as sent (may be absent). */
  parameters: unknown;
}

/** What `tool_choice` allows, reduced to what the default behaviour needs. */
export type ToolChoiceRule =
  | { mode: 'auto' }
  | { mode: 'none' }
  | { mode: 'required' }
  | { mode: 'named'; name: string }
  | { mode: 'allowed'; names: readonly string[] };

/** The parts of a chat completion request the mock model acts on. */
export interface ChatRequest {
  messages: readonly IncomingChatMessage[];
  tools: readonly OfferedTool[];
  toolChoice: ToolChoiceRule;
  /** @default true, as in the OpenAI API */
  parallelToolCalls: boolean;
  stream: boolean;
  includeUsage: boolean;
  /** Characters of the request that count towards `prompt_tokens`. */
  promptCharacters: number;
}

/** An OpenAI-shaped `invalid_request_error`, minus the `type`. */
export interface ChatRequestProblem {
  message: string;
  param: string | null;
  code: string | null;
}

export type ReadChatRequestResult =
  { ok: true; request: ChatRequest } | { ok: false; problem: ChatRequestProblem };

/**
 * Checks `body` (already parsed JSON) as a chat completion request.
 *
 * @example
 * readChatRequest({ model: 'm' })
 * // → { ok: false, problem: { message: "Missing required parameter: 'messages'.", param: 'messages', code: 'missing_required_parameter' } }
 */
export function readChatRequest(body: unknown): ReadChatRequestResult {
  if (!isObject(body)) {
    return problem(
      `Invalid type for the request body: expected an object, but got ${jsonType(body)} instead.`,
      null,
      'invalid_type',
    );
  }
  if (!('messages' in body)) {
    return problem("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  }
  const rawMessages = body['messages'];
  if (!Array.isArray(rawMessages)) {
    return problem(
      `Invalid type for 'messages': expected an array, but got ${jsonType(rawMessages)} instead.`,
      'messages',
      'invalid_type',
    );
  }
  if (rawMessages.length === 0) {
    return problem(
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'messages',
      'empty_array',
    );
  }
  const messages: IncomingChatMessage[] = [];
  for (const [index, message] of rawMessages.entries()) {
    const param = `messages[${index}]`;
    if (!isObject(message)) {
      return problem(
        `Invalid type for '${param}': expected an object, but got ${jsonType(message)} instead.`,
        param,
        'invalid_type',
      );
    }
    const role = message['role'];
    if (typeof role !== 'string') {
      return problem(
        `Missing required parameter: '${param}.role'.`,
        `${param}.role`,
        'missing_required_parameter',
      );
    }
    messages.push({ ...message, role });
  }

  const tools: OfferedTool[] = [];
  if ('tools' in body && body['tools'] !== null) {
    const rawTools = body['tools'];
    if (!Array.isArray(rawTools)) {
      return problem(
        `Invalid type for 'tools': expected an array, but got ${jsonType(rawTools)} instead.`,
        'tools',
        'invalid_type',
      );
    }
    for (const [index, tool] of rawTools.entries()) {
      // Only function tools can be called by the mock; other kinds (`custom`) are ignored.
      if (!isObject(tool) || (tool['type'] !== undefined && tool['type'] !== 'function')) continue;
      const definition = tool['function'];
      const name = isObject(definition) ? definition['name'] : undefined;
      if (!isObject(definition) || typeof name !== 'string' || name === '') {
        const param = `tools[${index}].function.name`;
        return problem(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
      }
      tools.push({ name, parameters: definition['parameters'] });
    }
  }

  const toolChoice = readToolChoice(body['tool_choice'], tools);
  if ('problem' in toolChoice) return { ok: false, problem: toolChoice.problem };

  const streamOptions = body['stream_options'];
  return {
    ok: true,
    request: {
      messages,
      tools,
      toolChoice: toolChoice.rule,
      parallelToolCalls: body['parallel_tool_calls'] !== false,
      stream: body['stream'] === true,
      includeUsage: isObject(streamOptions) && streamOptions['include_usage'] === true,
      promptCharacters:
        JSON.stringify(rawMessages).length + (tools.length > 0 ? JSON.stringify(body['tools']).length : 0),
    },
  };
}

function readToolChoice(
  value: unknown,
  tools: readonly OfferedTool[],
): { rule: ToolChoiceRule } | { problem: ChatRequestProblem } {
  if (value === undefined || value === null || value === 'auto') return { rule: { mode: 'auto' } };
  if (value === 'none' || value === 'required') return { rule: { mode: value } };
  if (isObject(value)) {
    const type = value['type'];
    const definition = value['function'];
    if (type === 'function' && isObject(definition) && typeof definition['name'] === 'string') {
      const name = definition['name'];
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
    const allowed = value['allowed_tools'];
    if (type === 'allowed_tools' && isObject(allowed) && Array.isArray(allowed['tools'])) {
      const names: string[] = [];
      for (const entry of allowed['tools']) {
        const entryFunction = isObject(entry) ? entry['function'] : undefined;
        if (isObject(entryFunction) && typeof entryFunction['name'] === 'string')
          names.push(entryFunction['name']);
      }
      return { rule: { mode: 'allowed', names } };
    }
  }
  return {
    problem: {
      message: "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or a named function.",
      param: 'tool_choice',
      code: 'invalid_value',
    },
  };
}

function problem(message: string, param: string | null, code: string | null): ReadChatRequestResult {
  return { ok: false, problem: { message, param, code } };
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}
