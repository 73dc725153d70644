/**
 * The tool calls of a Chat Completions stream, assembled from their fragments: which call a fragment
 * belongs to (by `index`, or, for servers that send none, by id, name or order), what each call has
 * received so far, and how many still wait for a block. Used by `StreamTranslator`; I/O-free.
 *
 * @module
 */
import { JsonPrefixReader } from './complete-cut-json.js';

/** One upstream tool call, from its first fragment to its flush. */
export interface StreamToolCall {
  /** Order among calls at flush: the upstream `index`, or one past the highest so far for index-less calls. */
  order: number;
  /** Creation order: ties in `order`, and positions in error messages. */
  sequence: number;
  providerId: string | undefined;
  name: string | undefined;
  /** Every argument fragment, in order; joined once, at the end. */
  fragments: string[];
  /**
   * `pending` until its block opens; `opened` after: live while its block is still the open one (the
   * stream writer knows), closed once another block took its place.
   */
  state: 'pending' | 'opened';
  /** How much of a live call's arguments was sent in `input_json_delta`s. */
  sentLength: number;
  /** A live call's arguments received but not yet sent (see `StreamTranslator`). */
  held: string;
  /** Reads a live call's arguments as they come; `undefined` once they stop being JSON (then all is held). */
  prefix: JsonPrefixReader | undefined;
  /**
   * At the end, for an opened call: what its block still needs after what was sent (a cut's completion,
   * or the rest of a repaired input); for a pending call: its whole arguments as delivered.
   */
  completion: string;
}

/** Every tool call of one stream, in creation order, with the lookups that place each fragment. */
export class StreamToolCalls {
  readonly #calls: StreamToolCall[] = [];
  readonly #callsByIndex = new Map<number, StreamToolCall>();
  readonly #callsById = new Map<string, StreamToolCall>();
  #lastCall: StreamToolCall | undefined;
  #highestOrder = -1;
  #pendingCount = 0;

  /** Every call so far, in creation order. */
  get all(): readonly StreamToolCall[] {
    return this.#calls;
  }

  /** How many calls have neither been given a block nor been dropped. */
  get pendingCount(): number {
    return this.#pendingCount;
  }

  /**
   * The call a tool-call fragment belongs to, created if it is new. While the call is pending it learns
   * the fragment's id and name, but never overwrites a known one (quirk 3: continuations repeat `id: ""`
   * or send `name: ""`); an id or name that arrives after the block opened cannot change it any more.
   */
  receive(rawIndex: unknown, id: string | undefined, name: string | undefined): StreamToolCall {
    const call = this.#callFor(rawIndex, id, name);
    if (call.state === 'pending') {
      if (call.providerId === undefined && id !== undefined) {
        call.providerId = id;
        if (!this.#callsById.has(id)) this.#callsById.set(id, call);
      }
      if (call.name === undefined && name !== undefined) call.name = name;
    }
    return call;
  }

  /** Counts one pending call as no longer waiting: its block was opened, or it was dropped. */
  removeFromPending(): void {
    this.#pendingCount--;
  }

  /**
   * The call a tool-call fragment belongs to. With an `index`, that index's call. Without one (Mistral,
   * Gemini: quirk 2), a fragment with a function name or a not-yet-seen id starts a new call; an
   * arguments-only fragment continues the call with its id, else the last call.
   */
  #callFor(rawIndex: unknown, id: string | undefined, name: string | undefined): StreamToolCall {
    if (typeof rawIndex === 'number' && Number.isInteger(rawIndex) && rawIndex >= 0) {
      const existing = this.#callsByIndex.get(rawIndex);
      if (existing !== undefined) return existing;
      const call = this.#newCall(rawIndex);
      this.#callsByIndex.set(rawIndex, call);
      return call;
    }
    const startsNewCall = name !== undefined || (id !== undefined && !this.#callsById.has(id));
    if (!startsNewCall) {
      const byId = id === undefined ? undefined : this.#callsById.get(id);
      const existing = byId ?? this.#lastCall;
      if (existing !== undefined) return existing;
    }
    return this.#newCall(this.#highestOrder + 1);
  }

  #newCall(order: number): StreamToolCall {
    const call: StreamToolCall = {
      order,
      sequence: this.#calls.length,
      providerId: undefined,
      name: undefined,
      fragments: [],
      state: 'pending',
      sentLength: 0,
      held: '',
      prefix: new JsonPrefixReader(),
      completion: '',
    };
    this.#calls.push(call);
    this.#lastCall = call;
    this.#highestOrder = Math.max(this.#highestOrder, order);
    this.#pendingCount++;
    return call;
  }
}

/** What error messages say of a call: its position among the calls, its name and its provider id. */
export function toolCallDescription(call: StreamToolCall): {
  position: number;
  name: string | undefined;
  id: string | undefined;
} {
  return { position: call.sequence, name: call.name, id: call.providerId };
}

/** A fragment of `function.arguments` as text: strings as they are, objects (Ollama-style) stringified once. */
export function argumentsFragment(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? '';
}
