/**
 * Reads an incoming request body for the mock model, whichever endpoint it came to: checks the fields the
 * mock relies on and reports a problem the way OpenAI does (`message`, `param`, `code`). Everything else in
 * the body is tolerated and ignored, as a lenient compatible server would.
 *
 * The two endpoints differ only in where a body keeps things (`WireRequestShape`: `chat-request-shape.ts`,
 * `responses-request-shape.ts`); what is read is the same `MockRequest`, with the conversation in the one
 * shape the default behaviour reads (Chat Completions messages). So both endpoints end agent loops by the
 * same rules.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';

/** A message of the conversation, in the Chat Completions shape; only `role` is checked. */
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

/** The parts of a request the mock model acts on. */
export interface MockRequest {
  messages: readonly IncomingChatMessage[];
  tools: readonly OfferedTool[];
  toolChoice: ToolChoiceRule;
  /** @default true, as in the OpenAI API */
  parallelToolCalls: boolean;
  stream: boolean;
  /** Whether a Chat Completions stream ends with a usage chunk. */
  includeUsage: boolean;
  /** Characters of the request that count towards the input tokens. */
  promptCharacters: number;
}

/** An OpenAI-shaped `invalid_request_error`, minus the `type`. */
export interface RequestProblem {
  message: string;
  param: string | null;
  code: string | null;
}

/** The request as read, or the problem that refuses it. */
export type ReadRequestResult = { ok: true; request: MockRequest } | { ok: false; problem: RequestProblem };

/** Where one endpoint's body keeps what the mock reads. */
export interface WireRequestShape {
  /** The field holding the conversation (`messages`, `input`): a body without it is refused. */
  readonly conversationField: string;
  /** The conversation as Chat Completions messages, or the problem with it. */
  readConversation(body: Record<string, unknown>): IncomingChatMessage[] | RequestProblem;
  /**
   * A tool entry's function name and schema, with the parameter that names the function; `undefined` for
   * a tool the mock cannot call (not a function tool), which is ignored.
   */
  readTool(
    tool: unknown,
    index: number,
  ): { name: unknown; parameters: unknown; nameParam: string } | undefined;
  /** The function a `tool_choice` object names, if it names one. */
  namedChoice(choice: Record<string, unknown>): string | undefined;
  /** The functions an `allowed_tools` choice lists, if it is one. */
  allowedChoice(choice: Record<string, unknown>): string[] | undefined;
  /** Whether the body asks for a usage chunk at the end of a stream. */
  includesUsage(body: Record<string, unknown>): boolean;
  /** Characters of the conversation, and of the tools when any are offered, that count as input. */
  promptCharacters(body: Record<string, unknown>, offersTools: boolean): number;
}

/**
 * Checks `body` (already parsed JSON) as a request of the endpoint `shape` describes.
 *
 * @example
 * readMockRequest({ model: 'm' }, CHAT_REQUEST_SHAPE)
 * // → { ok: false, problem: { message: "Missing required parameter: 'messages'.", param: 'messages', code: 'missing_required_parameter' } }
 */
export function readMockRequest(body: unknown, shape: WireRequestShape): ReadRequestResult {
  if (!isObject(body)) {
    return problem(
      `Invalid type for the request body: expected an object, but got ${jsonType(body)} instead.`,
      null,
      'invalid_type',
    );
  }
  const field = shape.conversationField;
  if (!(field in body)) return missing(field);
  const messages = shape.readConversation(body);
  if (!Array.isArray(messages)) return { ok: false, problem: messages };
  const tools = readTools(body['tools'], shape);
  if (!Array.isArray(tools)) return { ok: false, problem: tools };
  const toolChoice = readToolChoice(body['tool_choice'], tools, shape);
  if ('problem' in toolChoice) return { ok: false, problem: toolChoice.problem };
  return {
    ok: true,
    request: {
      messages,
      tools,
      toolChoice: toolChoice.rule,
      parallelToolCalls: body['parallel_tool_calls'] !== false,
      stream: body['stream'] === true,
      includeUsage: shape.includesUsage(body),
      promptCharacters: shape.promptCharacters(body, tools.length > 0),
    },
  };
}

function readTools(rawTools: unknown, shape: WireRequestShape): OfferedTool[] | RequestProblem {
  if (rawTools === undefined || rawTools === null) return [];
  if (!Array.isArray(rawTools)) {
    return {
      message: `Invalid type for 'tools': expected an array, but got ${jsonType(rawTools)} instead.`,
      param: 'tools',
      code: 'invalid_type',
    };
  }
  const tools: OfferedTool[] = [];
  for (const [index, tool] of rawTools.entries()) {
    const read = shape.readTool(tool, index);
    if (read === undefined) continue;
    if (typeof read.name !== 'string' || read.name === '') return missing(read.nameParam).problem;
    tools.push({ name: read.name, parameters: read.parameters });
  }
  return tools;
}

function readToolChoice(
  value: unknown,
  tools: readonly OfferedTool[],
  shape: WireRequestShape,
): { rule: ToolChoiceRule } | { problem: RequestProblem } {
  if (value === undefined || value === null || value === 'auto') return { rule: { mode: 'auto' } };
  if (value === 'none' || value === 'required') return { rule: { mode: value } };
  const name = isObject(value) ? shape.namedChoice(value) : undefined;
  if (name !== undefined) {
    if (tools.some((tool) => tool.name === name)) return { rule: { mode: 'named', name } };
    return {
      problem: {
        message: `Invalid value for 'tool_choice': function '${name}' is not among the offered tools.`,
        param: 'tool_choice',
        code: 'invalid_value',
      },
    };
  }
  const names = isObject(value) ? shape.allowedChoice(value) : undefined;
  if (names !== undefined) return { rule: { mode: 'allowed', names } };
  return {
    problem: {
      message: "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or a named function.",
      param: 'tool_choice',
      code: 'invalid_value',
    },
  };
}

/** A problem with `message`, `param` and `code`. */
export function problem(
  message: string,
  param: string | null,
  code: string | null,
): { ok: false; problem: RequestProblem } {
  return { ok: false, problem: { message, param, code } };
}

/** The problem of a required parameter the body lacks. */
export function missing(param: string): { ok: false; problem: RequestProblem } {
  return problem(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

/** A JSON value's type as OpenAI's messages name it: `an object`, `an array`, `a string`, `null`. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}
