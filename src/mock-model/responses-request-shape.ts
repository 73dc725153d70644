/**
 * Where a Responses API request body (`POST /v1/responses`) keeps what the mock model reads
 * (`readMockRequest`), and how its conversation is restated as the Chat Completions messages the default
 * behaviour reads: `instructions` become a system message, `message` items messages, `function_call`
 * items the calls of an assistant message (with `call_id` as their id), `function_call_output` items tool
 * messages; `reasoning` items are skipped.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import { missing, problem } from './mock-request.js';
import type { IncomingChatMessage, RequestProblem, WireRequestShape } from './mock-request.js';

/** The Responses API body, as `readMockRequest` reads it. */
export const RESPONSES_REQUEST_SHAPE: WireRequestShape = {
  conversationField: 'input',
  readConversation: readInput,
  readTool(tool, index) {
    // Only function tools can be called by the mock; hosted tools are ignored.
    if (!isObject(tool) || tool['type'] !== 'function') return undefined;
    return { name: tool['name'], parameters: tool['parameters'], nameParam: `tools[${index}].name` };
  },
  namedChoice: (choice) =>
    choice['type'] === 'function' && typeof choice['name'] === 'string' ? choice['name'] : undefined,
  allowedChoice(choice) {
    const tools = choice['tools'];
    if (choice['type'] !== 'allowed_tools' || !Array.isArray(tools)) return undefined;
    return tools.flatMap((entry: unknown) =>
      isObject(entry) && typeof entry['name'] === 'string' ? [entry['name']] : [],
    );
  },
  // The Responses API always reports usage, in the terminal event.
  includesUsage: () => true,
  promptCharacters(body, offersTools) {
    const instructions = body['instructions'];
    return (
      JSON.stringify(body['input'] ?? '').length +
      (typeof instructions === 'string' ? instructions.length : 0) +
      (offersTools ? JSON.stringify(body['tools']).length : 0)
    );
  },
};

/** `instructions` and `input` (a string, or a list of items) as messages. */
function readInput(body: Record<string, unknown>): IncomingChatMessage[] | RequestProblem {
  const input = body['input'];
  const messages: IncomingChatMessage[] = [];
  const instructions = body['instructions'];
  if (typeof instructions === 'string' && instructions !== '') {
    messages.push({ role: 'system', content: instructions });
  }
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input });
    return messages;
  }
  if (!Array.isArray(input)) {
    return problem("Invalid type for 'input': expected a string or an array.", 'input', 'invalid_type')
      .problem;
  }
  for (const [index, item] of input.entries()) {
    const read = readItem(item, `input[${index}]`, messages);
    if (read !== undefined) return read;
  }
  return messages;
}

/** Adds what one input item says to `messages`; returns a problem for an item it cannot read. */
function readItem(item: unknown, param: string, messages: IncomingChatMessage[]): RequestProblem | undefined {
  if (!isObject(item)) {
    return { message: `Invalid type for '${param}': expected an object.`, param, code: 'invalid_type' };
  }
  const type = item['type'] ?? (typeof item['role'] === 'string' ? 'message' : undefined);
  switch (type) {
    case 'message': {
      const role = item['role'];
      if (typeof role !== 'string') return missing(`${param}.role`).problem;
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

/** A string field as it is; anything else as `''`. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
