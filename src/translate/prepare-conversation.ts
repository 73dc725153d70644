/**
 * `system` and `messages` → the wire-neutral conversation (docs/translation.md): the system prompt's
 * parts, then the merged turns in order, each batch of tool results right after the assistant turn that
 * asked for it. Both wires require that order: Chat Completions wants the tool messages directly after
 * the assistant message with the calls, the Responses API the outputs after the calls. Pure.
 *
 * @module
 */
import type { MessagesRequest, TextBlockParam } from '../protocol/messages.js';
import { blockPath, mergeTurns, type PositionedBlock, type Turn } from './check-pairing.js';
import { invalidRequest } from './invalid-request.js';
import { cacheControlOf } from './map-cache-control.js';
import type { NeutralTurn, TextPart } from './neutral-request.js';
import { readAssistantTurn } from './read-assistant-turn.js';
import { readToolResult } from './read-tool-result.js';
import { readUserContent } from './read-user-content.js';
import type { RequestWire } from './request-wire.js';
import type { ToolNameMap } from './tool-name-codec.js';

/** The conversation of a request: the system prompt and the turns. */
export interface NeutralConversation {
  system: TextPart[];
  turns: NeutralTurn[];
}

/**
 * Reads the system prompt and walks the merged turns in order. The results answering an assistant turn's
 * calls are taken from the next user turn (the one after any system messages in between) and placed
 * directly after the assistant turn; everything else keeps its order.
 *
 * @throws TransportError `MODEL_EINVAL` for a request without messages, a prefill, or a block the wire
 *   cannot carry where it stands.
 */
export function prepareConversation(
  request: MessagesRequest,
  toolNames: ToolNameMap,
  wire: RequestWire,
): NeutralConversation {
  if (request.messages.length === 0) invalidRequest('messages must contain at least one message');
  const system = systemPromptParts(request.system, wire);
  const merged = dropBlankPrefill(mergeTurns(request.messages), wire);
  const answered = new Set<PositionedBlock>();
  const turns = merged.flatMap((turn, turnIndex): NeutralTurn[] => {
    switch (turn.role) {
      case 'system': {
        const text = systemTurnText(turn);
        return text === '' ? [] : [{ role: 'system', text }];
      }
      case 'assistant': {
        const blocks = readAssistantTurn(turn, toolNames, wire);
        if (!blocks.some((block) => block.type === 'tool_call')) return [{ role: 'assistant', blocks }];
        // The answers are in the next turn that is not a system message, when it is a user turn (the
        // pairing rule); system messages in between follow the results.
        const next = merged.slice(turnIndex + 1).find((later) => later.role !== 'system');
        const results = next?.role === 'user' ? toolResultsOf(next) : [];
        results.forEach((positioned) => answered.add(positioned));
        return [{ role: 'assistant', blocks }, ...toolTurn(results, toolNames, wire)];
      }
      case 'user': {
        // Results no assistant turn asked for still go first (the pairing check refuses such requests
        // before translation, when the caller runs it).
        const unanswered = toolTurn(
          toolResultsOf(turn).filter((positioned) => !answered.has(positioned)),
          toolNames,
          wire,
        );
        const rest = turn.blocks.filter((positioned) => positioned.block.type !== 'tool_result');
        // A turn of nothing but tool results needs no user message; an empty turn still gets one.
        const isOnlyToolResults = rest.length === 0 && turn.blocks.length > 0;
        if (isOnlyToolResults) return unanswered;
        return [...unanswered, { role: 'user', parts: readUserContent(rest, wire) }];
      }
      default: {
        const unknown: never = turn.role;
        return invalidRequest(
          `messages[${turn.messageIndex}] has an unknown role ${JSON.stringify(unknown)}`,
        );
      }
    }
  });
  return { system, turns };
}

function toolResultsOf(turn: Turn): PositionedBlock[] {
  return turn.blocks.filter((positioned) => positioned.block.type === 'tool_result');
}

function toolTurn(
  results: readonly PositionedBlock[],
  toolNames: ToolNameMap,
  wire: RequestWire,
): NeutralTurn[] {
  if (results.length === 0) return [];
  return [
    { role: 'tool', results: results.map((positioned) => readToolResult(positioned, toolNames, wire)) },
  ];
}

/** The `system` field as text parts, each with its `cache_control` where the wire forwards it. */
function systemPromptParts(system: string | TextBlockParam[] | undefined, wire: RequestWire): TextPart[] {
  if (system === undefined) return [];
  if (typeof system === 'string') return [{ type: 'text', text: system }];
  return system.map((block, index): TextPart => {
    if (block.type !== 'text') {
      invalidRequest(
        `system[${index}] is a ${JSON.stringify(block.type)} block; only text blocks can be translated`,
      );
    }
    const cacheControl = wire.forwardsCacheControl ? cacheControlOf(block) : undefined;
    const text = block.text;
    return cacheControl === undefined ? { type: 'text', text } : { type: 'text', text, cacheControl };
  });
}

/**
 * A final assistant turn is a prefill: the model should continue it. Neither wire's servers do that
 * reliably, so it is refused, except a blank one (only whitespace text, or nothing), which asks for
 * nothing and is dropped.
 */
function dropBlankPrefill(turns: Turn[], wire: RequestWire): Turn[] {
  const last = turns.at(-1);
  if (last === undefined || last.role !== 'assistant') return turns;
  const isBlank = last.blocks.every(
    ({ block }) => block.type === 'text' && typeof block['text'] === 'string' && block['text'].trim() === '',
  );
  if (!isBlank) {
    invalidRequest(
      `messages[${last.messageIndex}]: the request ends with an assistant message (a prefill), and prefill is ` +
        `not supported by ${wire.prefillRefuser}; end the request with a user message`,
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
