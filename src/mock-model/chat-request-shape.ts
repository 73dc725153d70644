/**
 * Where a Chat Completions request body (`POST /v1/chat/completions`) keeps what the mock model reads
 * (`readMockRequest`): `messages`, function tools under `function`, a named choice under `function`,
 * usage asked for in `stream_options`.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import { jsonType, missing, problem } from './mock-request.js';
import type { IncomingChatMessage, RequestProblem, WireRequestShape } from './mock-request.js';

/** The Chat Completions body, as `readMockRequest` reads it. */
export const CHAT_REQUEST_SHAPE: WireRequestShape = {
  conversationField: 'messages',
  readConversation: (body) => readMessages(body['messages']),
  readTool(tool, index) {
    // Only function tools can be called by the mock; other kinds (`custom`) are ignored.
    if (!isObject(tool) || (tool['type'] !== undefined && tool['type'] !== 'function')) return undefined;
    const definition = isObject(tool['function']) ? tool['function'] : {};
    return {
      name: definition['name'],
      parameters: definition['parameters'],
      nameParam: `tools[${index}].function.name`,
    };
  },
  namedChoice(choice) {
    const definition = choice['function'];
    if (choice['type'] !== 'function' || !isObject(definition)) return undefined;
    return typeof definition['name'] === 'string' ? definition['name'] : undefined;
  },
  allowedChoice(choice) {
    const allowed = choice['allowed_tools'];
    if (choice['type'] !== 'allowed_tools' || !isObject(allowed) || !Array.isArray(allowed['tools'])) {
      return undefined;
    }
    return allowed['tools'].flatMap((entry: unknown) => {
      const entryFunction = isObject(entry) ? entry['function'] : undefined;
      return isObject(entryFunction) && typeof entryFunction['name'] === 'string'
        ? [entryFunction['name']]
        : [];
    });
  },
  includesUsage(body) {
    const streamOptions = body['stream_options'];
    return isObject(streamOptions) && streamOptions['include_usage'] === true;
  },
  promptCharacters: (body, offersTools) =>
    JSON.stringify(body['messages']).length + (offersTools ? JSON.stringify(body['tools']).length : 0),
};

/** `messages`: a non-empty array of objects with a string `role`. */
function readMessages(rawMessages: unknown): IncomingChatMessage[] | RequestProblem {
  if (!Array.isArray(rawMessages)) {
    return problem(
      `Invalid type for 'messages': expected an array, but got ${jsonType(rawMessages)} instead.`,
      'messages',
      'invalid_type',
    ).problem;
  }
  if (rawMessages.length === 0) {
    return problem(
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'messages',
      'empty_array',
    ).problem;
  }
  const messages: IncomingChatMessage[] = [];
  for (const [index, message] of rawMessages.entries()) {
    const param = `messages[${index}]`;
    if (!isObject(message)) {
      return problem(
        `Invalid type for '${param}': expected an object, but got ${jsonType(message)} instead.`,
        param,
        'invalid_type',
      ).problem;
    }
    const role = message['role'];
    if (typeof role !== 'string') return missing(`${param}.role`).problem;
    messages.push({ ...message, role });
  }
  return messages;
}
