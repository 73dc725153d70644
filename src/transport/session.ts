/**
 * The session ledger of the formal model (`pending` in `TpxTransport.tla`): for one caller, the tool_use
 * ids of the last delivered response, which the next request must answer exactly.
 *
 * @module
 */
import { TransportError, isTransportError } from '../errors.js';
import type { Message, MessageStreamEvent } from '../protocol/messages.js';
import { newToolResultIds } from '../translate/check-pairing.js';
import { validateMessagesRequest } from '../protocol/validate-messages.js';
import type { ExchangeOptions, MessagesRequestInput, ModelTransport } from './types.js';

/** The outcome of the last completed exchange: the model's `lastOutcome`. */
export type SessionOutcome = 'none' | 'ok' | 'err';

/** A single-caller conversation over a transport, enforcing the turn-level pairing invariant. */
export interface Session {
  /** The tool_use ids the caller still owes a tool_result for, in the order they were delivered. */
  readonly pending: readonly string[];
  /** The outcome of the last completed exchange. */
  readonly lastOutcome: SessionOutcome;
  /** Completed exchanges (delivered, failed or aborted). */
  readonly turns: number;
  /** Like `transport.send`, after checking that the request's new tool_results answer `pending` exactly. */
  send(request: MessagesRequestInput, options?: ExchangeOptions): Promise<Message>;
  /** Like `transport.stream`, with the same check; `pending` is set from the delivered tool_use blocks. */
  stream(request: MessagesRequestInput, options?: ExchangeOptions): AsyncIterable<MessageStreamEvent>;
  /** The caller cannot answer: drops the obligations and records an error outcome. */
  abort(): void;
}

/** Whether `a` and `b` hold the same ids, each once: `[a, a]` does not answer `[a, b]`. */
function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  if (set.size !== a.length || new Set(b).size !== b.length) return false;
  return b.every((id) => set.has(id));
}

/** Creates a session ledger over a transport. Not safe for concurrent exchanges: one caller, one turn at a time. */
export function createSession(transport: ModelTransport): Session {
  let pending: string[] = [];
  let lastOutcome: SessionOutcome = 'none';
  let turns = 0;
  let busy = false;

  function begin(request: MessagesRequestInput): void {
    if (busy)
      throw new TransportError(
        'MODEL_EINVAL',
        'a session runs one exchange at a time; the previous one is still running',
      );
    // An invalid request is refused by the transport with MODEL_EINVAL; the ledger checks valid ones.
    const validated = validateMessagesRequest(request);
    const answered = validated.ok ? newToolResultIds(validated.value.messages) : [...pending];
    if (!sameSet(pending, answered)) {
      const missing = pending.filter((id) => !answered.includes(id));
      const extra = answered.filter((id) => !pending.includes(id));
      const parts: string[] = [];
      if (missing.length > 0) parts.push(`missing tool_result for ${missing.join(', ')}`);
      if (extra.length > 0) parts.push(`tool_result for ids not pending: ${extra.join(', ')}`);
      if (parts.length === 0) parts.push('duplicate tool_result ids');
      throw new TransportError(
        'MODEL_EPAIRING',
        `the request does not answer the pending tool calls: ${parts.join('; ')}`,
      );
    }
    busy = true;
  }

  function succeed(content: readonly { type: string; id?: unknown }[]): void {
    pending = content.filter((block) => block.type === 'tool_use').map((block) => String(block.id));
    lastOutcome = 'ok';
    turns++;
    busy = false;
  }

  /**
   * A request refused before anything was sent (`MODEL_EINVAL`, `MODEL_EPAIRING`) is not an exchange:
   * the ledger is left as it was, so the caller can correct the request and answer the same tool calls
   * (the extended spec's `CallerMispair`). Any other failure ends the turn and drops the obligations.
   */
  function settleFailure(error: unknown): void {
    if (isTransportError(error) && (error.code === 'MODEL_EINVAL' || error.code === 'MODEL_EPAIRING')) {
      busy = false;
      return;
    }
    fail();
  }

  function fail(): void {
    pending = [];
    lastOutcome = 'err';
    turns++;
    busy = false;
  }

  return {
    get pending() {
      return pending;
    },
    get lastOutcome() {
      return lastOutcome;
    },
    get turns() {
      return turns;
    },
    async send(request, options) {
      begin(request);
      try {
        const message = await transport.send(request, options);
        succeed(message.content);
        return message;
      } catch (error) {
        settleFailure(error);
        throw error;
      }
    },
    stream(request, options) {
      return (async function* () {
        begin(request);
        const toolIds: { type: string; id: string }[] = [];
        let finished = false;
        try {
          for await (const event of transport.stream(request, options)) {
            if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
              toolIds.push({ type: 'tool_use', id: String((event.content_block as { id: string }).id) });
            }
            if (event.type === 'message_stop') finished = true;
            yield event;
          }
          if (!finished) throw new TransportError('MODEL_EPROTO', 'the stream ended before message_stop');
          succeed(toolIds);
        } catch (error) {
          settleFailure(error);
          throw isTransportError(error)
            ? error
            : new TransportError('MODEL_EPROTO', String(error), { cause: error });
        } finally {
          if (busy) fail(); // the caller stopped reading: the turn did not complete
        }
      })();
    },
    abort() {
      // As in the model (CallerAbort), there is something to abort only when obligations are pending.
      if (busy || pending.length === 0) return;
      pending = [];
      lastOutcome = 'err';
      turns++;
    },
  };
}
