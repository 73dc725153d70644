/**
 * A checker for the order of Messages stream events (docs/protocol.md A.7):
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
  return new StreamGrammarChecker();
}

/** The checker: the state the stream is in, and a rule per event type for leaving it. */
class StreamGrammarChecker implements StreamGrammar {
  #state: State = { name: 'before-start' };
  #nextIndex = 0;
  #position = -1;

  accept(event: GrammarEvent): string | undefined {
    this.#position++;
    const record = event as Record<string, unknown>;
    const type = record['type'];
    if (typeof type !== 'string') return this.#violation(String(type), 'an event needs a string "type"');
    if (!KNOWN_EVENT_TYPES.has(type)) return undefined;
    const state = this.#state;
    if (state.name === 'stopped' || state.name === 'errored') {
      return this.#violation(
        type,
        `no event may follow ${state.name === 'stopped' ? 'message_stop' : 'an error event'}`,
      );
    }
    if (type === 'error') {
      this.#state = { name: 'errored' };
      return undefined;
    }
    if (state.name === 'before-start') {
      if (type !== 'message_start') return this.#violation(type, 'the stream must begin with message_start');
      this.#state = { name: 'between-blocks' };
      return undefined;
    }
    return this.#acceptAfterStart(type, record);
  }

  end(): string | undefined {
    if (this.#state.name === 'stopped' || this.#state.name === 'errored') return undefined;
    return `the stream ended without message_stop (${this.#describeState()})`;
  }

  #violation(type: string, detail: string): string {
    return `event #${this.#position} (${type}): ${detail}`;
  }

  #describeState(): string {
    const state = this.#state;
    switch (state.name) {
      case 'before-start':
        return 'before message_start';
      case 'between-blocks':
        return this.#nextIndex === 0 ? 'after message_start' : `after block ${this.#nextIndex - 1} closed`;
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

  /** A known event other than `error`, after `message_start`. */
  #acceptAfterStart(type: string, record: Record<string, unknown>): string | undefined {
    switch (type) {
      case 'message_start':
        return this.#violation(type, `message_start may only come first (got it ${this.#describeState()})`);
      case 'ping':
        return undefined;
      case 'content_block_start':
        return this.#acceptBlockStart(type, record);
      case 'content_block_delta':
        return this.#acceptBlockDelta(type, record);
      case 'content_block_stop':
        return this.#acceptBlockStop(type, record);
      case 'message_delta':
        return this.#acceptMessageDelta(type, record);
      case 'message_stop':
        if (this.#state.name !== 'after-message-delta') {
          return this.#violation(
            type,
            `message_stop must follow message_delta (got it ${this.#describeState()})`,
          );
        }
        this.#state = { name: 'stopped' };
        return undefined;
      default:
        return undefined;
    }
  }

  #acceptBlockStart(type: string, record: Record<string, unknown>): string | undefined {
    if (this.#state.name !== 'between-blocks') {
      return this.#violation(
        type,
        `a block may only start when none is open and before message_delta (got it ${this.#describeState()})`,
      );
    }
    const index = record['index'];
    if (index !== this.#nextIndex) {
      return this.#violation(type, `expected index ${this.#nextIndex}, got ${JSON.stringify(index)}`);
    }
    const block = record['content_block'];
    const blockType = isObject(block) ? block['type'] : undefined;
    if (typeof blockType !== 'string') return this.#violation(type, 'content_block needs a string "type"');
    this.#state = { name: 'in-block', index: this.#nextIndex, blockType };
    return undefined;
  }

  /** The open block when `record` is for it, else the violation (no block open, or another one). */
  #openBlockFor(
    type: string,
    record: Record<string, unknown>,
    what: 'delta' | 'stop',
  ): Extract<State, { name: 'in-block' }> | string {
    const state = this.#state;
    if (state.name !== 'in-block')
      return this.#violation(type, `no block is open (${this.#describeState()})`);
    const index = record['index'];
    if (index !== state.index) {
      return this.#violation(
        type,
        `block ${state.index} is open, but the ${what} is for index ${JSON.stringify(index)}`,
      );
    }
    return state;
  }

  #acceptBlockDelta(type: string, record: Record<string, unknown>): string | undefined {
    const state = this.#openBlockFor(type, record, 'delta');
    if (typeof state === 'string') return state;
    const delta = record['delta'];
    const deltaType = isObject(delta) ? delta['type'] : undefined;
    if (!isObject(delta) || typeof deltaType !== 'string')
      return this.#violation(type, 'delta needs a string "type"');
    const rule = DELTA_BLOCK_TYPES.get(deltaType);
    if (rule === undefined) return undefined;
    if (!rule.blockTypes.has(state.blockType)) {
      return this.#violation(
        type,
        `a ${deltaType} cannot extend block ${state.index}, a ${state.blockType} block`,
      );
    }
    if (rule.field !== 'citation' && typeof delta[rule.field] !== 'string') {
      return this.#violation(type, `a ${deltaType} needs a string "${rule.field}"`);
    }
    return undefined;
  }

  #acceptBlockStop(type: string, record: Record<string, unknown>): string | undefined {
    const state = this.#openBlockFor(type, record, 'stop');
    if (typeof state === 'string') return state;
    this.#nextIndex++;
    this.#state = { name: 'between-blocks' };
    return undefined;
  }

  #acceptMessageDelta(type: string, record: Record<string, unknown>): string | undefined {
    const state = this.#state;
    if (state.name === 'in-block') {
      return this.#violation(
        type,
        `message_delta may only come after every block is closed (block ${state.index} is open)`,
      );
    }
    if (!isObject(record['delta'])) return this.#violation(type, 'message_delta needs a "delta" object');
    this.#state = { name: 'after-message-delta' };
    return undefined;
  }
}
