/**
 * Stateless checks of tool_use / tool_result pairing over a request's history, and the turn merging
 * both the check and the request translation start from.
 *
 * The rules (Anthropic's own, docs/protocol.md A.2; DESIGN.md `PairingInv`), applied after merging
 * consecutive same-role messages, and skipping `role:"system"` messages when deciding which turn comes
 * next:
 *
 * 1. Within one assistant turn, no two `tool_use` blocks share an id.
 * 2. Every `tool_use` of an assistant turn is answered by exactly one `tool_result` in the next turn,
 *    which must be a user turn. An assistant turn with `tool_use` at the end of the history is an error.
 *    A system message between the two does not matter, but one between two user messages separates
 *    them into two turns: all the answers must be in the first.
 * 3. Every `tool_result` answers a `tool_use` of the immediately preceding assistant turn.
 * 4. Within one user turn, no two `tool_result` blocks share a `tool_use_id`.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { ContentBlockParam, MessageParam, MessageRole, OtherBlock } from '../protocol/messages.js';

/** One content block of a merged turn, with the position it had in the request. */
export interface PositionedBlock {
  block: ContentBlockParam | OtherBlock;
  /** Index of the message in the request's `messages`. */
  messageIndex: number;
  /** Index of the block in that message's `content`; `undefined` when the content was a plain string. */
  blockIndex: number | undefined;
}

/** Consecutive messages of one role, merged as Anthropic merges them. */
export interface Turn {
  role: MessageRole;
  /** Index, in the request's `messages`, of the first message merged into this turn. */
  messageIndex: number;
  blocks: PositionedBlock[];
}

/**
 * Merges consecutive messages of the same role into turns, keeping where each block came from. A
 * string `content` becomes one text block. System messages are never merged: each stays a turn of its
 * own, and a system message between two user (or two assistant) messages keeps them apart here.
 */
export function mergeTurns(messages: readonly MessageParam[]): Turn[] {
  const turns: Turn[] = [];
  messages.forEach((message, messageIndex) => {
    const blocks: PositionedBlock[] =
      typeof message.content === 'string'
        ? [{ block: { type: 'text', text: message.content }, messageIndex, blockIndex: undefined }]
        : message.content.map((block, blockIndex) => ({ block, messageIndex, blockIndex }));
    const last = turns.at(-1);
    if (last !== undefined && last.role === message.role && message.role !== 'system') {
      last.blocks.push(...blocks);
    } else {
      turns.push({ role: message.role, messageIndex, blocks });
    }
  });
  return turns;
}

/** `messages[i].content[j]`, or `messages[i].content` for string content. */
export function blockPath(positioned: PositionedBlock): string {
  return positioned.blockIndex === undefined
    ? `messages[${positioned.messageIndex}].content`
    : `messages[${positioned.messageIndex}].content[${positioned.blockIndex}]`;
}

function toolUseIdOf(positioned: PositionedBlock): string | undefined {
  const block = positioned.block;
  return block.type === 'tool_use' && typeof block['id'] === 'string' ? block['id'] : undefined;
}

function toolResultIdOf(positioned: PositionedBlock): string | undefined {
  const block = positioned.block;
  return block.type === 'tool_result' && typeof block['tool_use_id'] === 'string'
    ? block['tool_use_id']
    : undefined;
}

function quoteIds(ids: readonly string[]): string {
  return ids.map((id) => JSON.stringify(id)).join(', ');
}

function fail(message: string): never {
  throw new TransportError('MODEL_EPAIRING', message);
}

/**
 * The turns that take part in pairing: consecutive same-role messages merged, then system messages left
 * out, so that a system message between an assistant turn and the next user turn does not separate
 * them. (It still separates two user turns: `user, system, user` is two user turns.)
 */
function conversationTurns(messages: readonly MessageParam[]): Turn[] {
  return mergeTurns(messages).filter((turn) => turn.role !== 'system');
}

/**
 * Checks tool_use / tool_result pairing over a request's history (the rules in the module comment).
 *
 * @throws TransportError `MODEL_EPAIRING`, naming the offending ids and the message index.
 */
export function checkPairing(messages: readonly MessageParam[]): void {
  const turns = conversationTurns(messages);
  // The tool_use ids the previous turn left open, when it was an assistant turn.
  let open: { ids: Set<string>; messageIndex: number } | undefined;

  for (const turn of turns) {
    if (turn.role === 'assistant') {
      if (open !== undefined && open.ids.size > 0) {
        fail(
          `the assistant turn at messages[${open.messageIndex}] has tool_use ${quoteIds([...open.ids])} ` +
            `but is followed by another assistant turn (messages[${turn.messageIndex}]), not by a user turn ` +
            'with the matching tool_result blocks',
        );
      }
      const ids = new Set<string>();
      for (const positioned of turn.blocks) {
        const id = toolUseIdOf(positioned);
        if (id === undefined) continue;
        if (ids.has(id)) {
          fail(
            `${blockPath(positioned)}: tool_use id ${JSON.stringify(id)} appears more than once in the assistant ` +
              `turn at messages[${turn.messageIndex}]; tool_use ids must be unique`,
          );
        }
        ids.add(id);
      }
      open = { ids, messageIndex: turn.messageIndex };
      continue;
    }

    // A user turn: its tool_result blocks must answer exactly the open tool_use ids.
    const answered = new Set<string>();
    for (const positioned of turn.blocks) {
      const id = toolResultIdOf(positioned);
      if (id === undefined) continue;
      if (answered.has(id)) {
        fail(
          `${blockPath(positioned)}: tool_result for tool_use_id ${JSON.stringify(id)} appears more than once ` +
            `in the user turn at messages[${turn.messageIndex}]`,
        );
      }
      if (open === undefined || !open.ids.has(id)) {
        const where =
          open === undefined
            ? 'there is no assistant turn right before it'
            : `the assistant turn at messages[${open.messageIndex}] has no tool_use with that id`;
        fail(
          `${blockPath(positioned)}: tool_result for tool_use_id ${JSON.stringify(id)} has no matching tool_use: ${where}`,
        );
      }
      answered.add(id);
    }
    if (open !== undefined) {
      const missing = [...open.ids].filter((id) => !answered.has(id));
      if (missing.length > 0) {
        fail(
          `the assistant turn at messages[${open.messageIndex}] has tool_use ${quoteIds(missing)} with no ` +
            `tool_result in the next user turn (messages[${turn.messageIndex}])`,
        );
      }
    }
    open = undefined;
  }

  if (open !== undefined && open.ids.size > 0) {
    fail(
      `the assistant turn at messages[${open.messageIndex}] has tool_use ${quoteIds([...open.ids])} but no user ` +
        'turn follows it with the matching tool_result blocks',
    );
  }
}

/**
 * The `tool_use_id`s of the `tool_result` blocks in the last user turn of the history (consecutive user
 * messages merged; trailing system messages skipped), in order. Empty when the history does not end with a user
 * turn. This is what a request answers, for a session's ledger of pending tool calls.
 */
export function newToolResultIds(messages: readonly MessageParam[]): string[] {
  const last = conversationTurns(messages).at(-1);
  if (last === undefined || last.role !== 'user') return [];
  return last.blocks.flatMap((positioned) => {
    const id = toolResultIdOf(positioned);
    return id === undefined ? [] : [id];
  });
}
