/**
 * Mistral's tool-call ids: its API refuses any `tool_call_id` that is not exactly nine characters of
 * `[A-Za-z0-9]` ("Tool call id was call_0fypS1hVX but must be a-z, A-Z, 0-9, with a length of 9"), also
 * in the history it is sent back. Ids Mistral itself emitted already have that shape; ids from anywhere
 * else (another provider earlier in the conversation, ids this library generated for calls that came
 * without one) need a stand-in.
 *
 * The stand-in is derived from the id alone (nine characters picked by the bytes of its sha256 digest),
 * so every request of a conversation maps an id the same way, on any replica, with no stored state. The
 * map is rebuilt from each request's history and checked to be one-to-one.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { TransportError } from '../errors.js';
import type { ChatMessage } from '../protocol/chat-completions.js';

const MISTRAL_ID = /^[A-Za-z0-9]{9}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const ID_LENGTH = 9;

/** True for an id Mistral accepts. */
export function isMistralToolId(id: string): boolean {
  return MISTRAL_ID.test(id);
}

/**
 * The id sent to Mistral for a tool-call id: the id itself when Mistral accepts it, else nine
 * characters derived from its sha256 digest.
 *
 * @example
 * mistralToolId('gSIMJiOkT')   // → 'gSIMJiOkT'
 * mistralToolId('toolu_01A')   // → nine characters of [A-Za-z0-9], the same on every call
 */
export function mistralToolId(id: string): string {
  if (isMistralToolId(id)) return id;
  const digest = createHash('sha256').update(id, 'utf8').digest();
  let result = '';
  for (let position = 0; position < ID_LENGTH; position++) {
    result += ALPHABET.charAt(digest[position]! % ALPHABET.length);
  }
  return result;
}

/**
 * Rewrites every tool-call id of a translated conversation (assistant `tool_calls[].id` and tool
 * messages' `tool_call_id`) to the id Mistral accepts. Returns new messages; the input is not changed.
 *
 * @returns the messages, and the map from each original id to the id sent (one entry per distinct id)
 * @throws TransportError `MODEL_EINVAL` when two different ids of the conversation would reach Mistral as
 *   the same id (the answers could no longer be told apart).
 */
export function mapMistralToolIds(messages: readonly ChatMessage[]): {
  messages: ChatMessage[];
  idMap: ReadonlyMap<string, string>;
} {
  const idMap = new Map<string, string>();
  const originalBySent = new Map<string, string>();
  const map = (id: string): string => {
    const known = idMap.get(id);
    if (known !== undefined) return known;
    const sent = mistralToolId(id);
    const other = originalBySent.get(sent);
    if (other !== undefined && other !== id) {
      throw new TransportError(
        'MODEL_EINVAL',
        `the tool-call ids ${JSON.stringify(other)} and ${JSON.stringify(id)} would both reach Mistral as ` +
          `${JSON.stringify(sent)} (Mistral accepts only nine letters and digits); rename one of them`,
      );
    }
    idMap.set(id, sent);
    originalBySent.set(sent, id);
    return sent;
  };

  // Ids Mistral accepts claim themselves first, so a derived id that happens to equal one of them is
  // reported as a collision rather than silently shadowing it.
  for (const message of messages) {
    for (const id of toolIdsOf(message)) if (isMistralToolId(id)) map(id);
  }
  const mapped = messages.map((message): ChatMessage => {
    if (message.role === 'tool') return { ...message, tool_call_id: map(message.tool_call_id) };
    if (message.role === 'assistant' && message.tool_calls !== undefined) {
      return { ...message, tool_calls: message.tool_calls.map((call) => ({ ...call, id: map(call.id) })) };
    }
    return message;
  });
  return { messages: mapped, idMap };
}

function toolIdsOf(message: ChatMessage): string[] {
  if (message.role === 'tool') return [message.tool_call_id];
  if (message.role === 'assistant') return (message.tool_calls ?? []).map((call) => call.id);
  return [];
}
