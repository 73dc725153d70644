/**
 * `system` and `messages` → Chat Completions messages (docs/translation.md): system prompt first, then
 * the merged turns in order, each tool message right after the assistant message that asked for it.
 * Pure.
 *
 * @module
 */
import type { ChatMessage, ChatTextPart } from '../protocol/chat-completions.js';
import type { MessagesRequest, TextBlockParam } from '../protocol/messages.js';
import { blockPath, mergeTurns, type PositionedBlock, type Turn } from './check-pairing.js';
import type { DialectProfile } from './dialects.js';
import { invalidRequest } from './invalid-request.js';
import { cacheControlOf, forwardsCacheControl } from './map-cache-control.js';
import type { ToolNameMap } from './tool-name-codec.js';
import { translateAssistantTurn } from './translate-assistant-turn.js';
import { translateToolResults } from './translate-tool-results.js';
import { translateUserContent } from './translate-user-content.js';

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
        invalidRequest(
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
export function translateMessages(
  request: MessagesRequest,
  toolNames: ToolNameMap,
  dialect: DialectProfile | undefined,
): ChatMessage[] {
  if (request.messages.length === 0) invalidRequest('messages must contain at least one message');
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
        invalidRequest(`messages[${turn.messageIndex}] has an unknown role ${JSON.stringify(unknown)}`);
      }
    }
  });
  if (messages.length === 0) {
    invalidRequest('messages holds nothing to send: its only message is a blank assistant message');
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
    invalidRequest(
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
      if (block.type !== 'text') {
        invalidRequest(
          `${blockPath(positioned)} is a ${JSON.stringify(block.type)} block in a system message; only text can be translated`,
        );
      }
      if (typeof block['text'] !== 'string') {
        invalidRequest(`${blockPath(positioned)}.text must be a string (a text block in a system message)`);
      }
      return block['text'];
    })
    .join('\n\n');
}
