/**
 * A checker for the order of Messages stream events (PROTOCOLS.md A.7):
 *
 * ```
 * message_start
 * ( ping )*
 * ( content_block_start  (content_block_delta | ping)*  content_block_stop )*   -- index 0,1,2… in order
 * message_delta+
 * message_stop
 * ```
 *
 * plus: `ping` anywhere after `message_start` (until `message_stop`); only one block open at a time; each
 * delta's type fits its block's type; `error` may replace the tail at any point; unknown event types are
 * skipped (the protocol adds new ones). It checks order and the fields that order depends on (`index`,
 * block and delta types); payload shapes are `validateStreamEvent`'s job.
 *
 * @module
 */
import type { ErrorEvent, MessageStreamEvent } from './messages.js';
import { isObject } from './is-object.js';

/** An event as the checker reads it: one of ours, or any object with a string `type`. */
export type GrammarEvent = MessageStreamEvent | ErrorEvent | { type: string; [key: string]: unknown };

/** A stateful checker of one stream; see `createStreamGrammar`. */
export interface StreamGrammar {
  /** Checks the next event; returns a sentence describing the violation, or `undefined` when it fits. */
  accept(event: GrammarEvent): string | undefined;
  /** Checks that the stream may end here; returns a sentence describing what is missing, or `undefined`. */
  end(): string | undefined;
}

/** Which block types each known delta type may extend. Unknown delta types are accepted (future). */
const DELTA_BLOCK_TYPES: ReadonlyMap<string, { field: string; blockTypes: ReadonlySet<string> }> = new Map([
  ['text_delta', { field: 'text', blockTypes: new Set(['text']) }],
  ['citations_delta', { field: 'citation', blockTypes: new Set(['text']) }],
  [
    'input_json_delta',
    { field: 'partial_json', blockTypes: new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']) },
  ],
  ['thinking_delta', { field: 'thinking', blockTypes: new Set(['thinking']) }],
  ['signature_delta', { field: 'signature', blockTypes: new Set(['thinking']) }],
]);

const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set([
  'message_start',
  'ping',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'error',
]);

type State =
  | { name: 'before-start' }
  | { name: 'between-blocks' }
  | { name: 'in-block'; index: number; blockType: string }
  | { name: 'after-message-delta' }
  | { name: 'stopped' }
  | { name: 'errored' };

/**
 * Creates a checker for one Messages event stream.
 *
 * @example
 * const grammar = createStreamGrammar();
 * for (const event of events) {
 *   const violation = grammar.accept(event);
 *   if (violation !== undefined) throw new Error(violation);
 * }
 * const missing = grammar.end(); // e.g. 'the stream ended without message_stop (block 0 is open)'
 */
export function createStreamGrammar(): StreamGrammar {
  let state: State = { name: 'before-start' };
  let nextIndex = 0;
  let position = -1;

  const violation = (type: string, detail: string): string => `event #${position} (${type}): ${detail}`;

  function describeState(): string {
    switch (state.name) {
      case 'before-start':
        return 'before message_start';
      case 'between-blocks':
        return nextIndex === 0 ? 'after message_start' : `after block ${nextIndex - 1} closed`;
      case 'in-block':
        return `while block ${state.index} (${state.blockType}) is open`;
      case 'after-message-delta':
        return 'after message_delta';
      case 'stopped':
        return 'after message_stop';
      case 'errored':
        return 'after an error event';
    }
  }

  function accept(event: GrammarEvent): string | undefined {
    position++;
    const record = event as Record<string, unknown>;
    const type = record['type'];
    if (typeof type !== 'string') return violation(String(type), 'an event needs a string "type"');
    if (!KNOWN_EVENT_TYPES.has(type)) return undefined;
    if (state.name === 'stopped' || state.name === 'errored') {
      return violation(
        type,
        `no event may follow ${state.name === 'stopped' ? 'message_stop' : 'an error event'}`,
      );
    }
    if (type === 'error') {
      state = { name: 'errored' };
      return undefined;
    }
    if (state.name === 'before-start') {
      if (type !== 'message_start') return violation(type, 'the stream must begin with message_start');
      state = { name: 'between-blocks' };
      return undefined;
    }

    switch (type) {
      case 'message_start':
        return violation(type, `message_start may only come first (got it ${describeState()})`);
      case 'ping':
        return undefined;
      case 'content_block_start': {
        if (state.name !== 'between-blocks') {
          return violation(
            type,
            `a block may only start when none is open and before message_delta (got it ${describeState()})`,
          );
        }
        const index = record['index'];
        if (index !== nextIndex) {
          return violation(type, `expected index ${nextIndex}, got ${JSON.stringify(index)}`);
        }
        const block = record['content_block'];
        const blockType = isObject(block) ? block['type'] : undefined;
        if (typeof blockType !== 'string') return violation(type, 'content_block needs a string "type"');
        state = { name: 'in-block', index: nextIndex, blockType };
        return undefined;
      }
      case 'content_block_delta': {
        if (state.name !== 'in-block') return violation(type, `no block is open (${describeState()})`);
        const index = record['index'];
        if (index !== state.index) {
          return violation(
            type,
            `block ${state.index} is open, but the delta is for index ${JSON.stringify(index)}`,
          );
        }
        const delta = record['delta'];
        const deltaType = isObject(delta) ? delta['type'] : undefined;
        if (!isObject(delta) || typeof deltaType !== 'string')
          return violation(type, 'delta needs a string "type"');
        const rule = DELTA_BLOCK_TYPES.get(deltaType);
        if (rule === undefined) return undefined;
        if (!rule.blockTypes.has(state.blockType)) {
          return violation(
            type,
            `a ${deltaType} cannot extend block ${state.index}, a ${state.blockType} block`,
          );
        }
        if (rule.field !== 'citation' && typeof delta[rule.field] !== 'string') {
          return violation(type, `a ${deltaType} needs a string "${rule.field}"`);
        }
        return undefined;
      }
      case 'content_block_stop': {
        if (state.name !== 'in-block') return violation(type, `no block is open (${describeState()})`);
        const index = record['index'];
        if (index !== state.index) {
          return violation(
            type,
            `block ${state.index} is open, but the stop is for index ${JSON.stringify(index)}`,
          );
        }
        nextIndex++;
        state = { name: 'between-blocks' };
        return undefined;
      }
      case 'message_delta': {
        if (state.name === 'in-block') {
          return violation(
            type,
            `message_delta may only come after every block is closed (block ${state.index} is open)`,
          );
        }
        if (!isObject(record['delta'])) return violation(type, 'message_delta needs a "delta" object');
        state = { name: 'after-message-delta' };
        return undefined;
      }
      case 'message_stop': {
        if (state.name !== 'after-message-delta') {
          return violation(type, `message_stop must follow message_delta (got it ${describeState()})`);
        }
        state = { name: 'stopped' };
        return undefined;
      }
      default:
        return undefined;
    }
  }

  function end(): string | undefined {
    if (state.name === 'stopped' || state.name === 'errored') return undefined;
    return `the stream ended without message_stop (${describeState()})`;
  }

  return { accept, end };
}
