/**
 * `tpx mock-model --replay FILE`: answers the requests a journal recorded (`tpx serve --journal DIR`)
 * with the answers recorded for them, so that a session recorded once against a real model runs again
 * offline, deterministically, in a test.
 *
 * The mock model receives what tpx sends upstream, so a request is matched against the recorded
 * `upstreamRequests` — the last attempt of each exchange, the one that was answered — after both are
 * normalised:
 *
 * - `stream` and `stream_options` are left out (the replayed request chooses JSON or a stream);
 * - `user`, `metadata`, `safety_identifier` and `prompt_cache_key` are left out: they carry a client's
 *   session or user id, which changes from run to run (Claude Code's `metadata.user_id`);
 * - the `id` and `encrypted_content` of Responses API `reasoning` input items are left out: they name
 *   the upstream's own reasoning items, which a replay renumbers;
 * - image and document data are compared by hash and size (as the journal keeps them by default).
 *
 * Everything else must be equal: the conversation, tools, model, `max_tokens`, sampling settings. The
 * same request recorded several times is answered with its recordings in order, the last one again once
 * they are used up. A request without a recording is answered 404, naming the nearest recording (the one
 * with the fewest differing fields, on the same endpoint) and where it differs.
 *
 * @module
 */
import type { JournalRecord } from '../journal/journal-record.js';
import { readJournal } from '../journal/read-journal.js';
import { redactMedia } from '../journal/redact-media.js';
import { isObject } from '../protocol/is-object.js';
import type { Plan } from './plan-reply.js';
import { replayPlan } from './replay-reply.js';

/** The endpoint a body is for: Chat Completions (`messages`) or Responses (`input`). */
export type ReplayWire = 'chat' | 'responses';

/** One recorded exchange that can be replayed. */
export interface Recording {
  /** The exchange's id in the journal. */
  id: string;
  /** Where it is: `file:line`. */
  place: string;
  wire: ReplayWire;
  /** The normalised body of its last upstream request. */
  body: unknown;
  record: JournalRecord;
}

/** A journal loaded for replay. */
export interface ReplayJournal {
  recordings: Recording[];
  /** Lines that could not be used, with why (damaged, or not an exchange the mock model can replay). */
  skipped: { place: string; reason: string }[];
}

/** Top-level fields left out of a body before it is compared (see the module comment). */
const IGNORED_FIELDS = new Set([
  'stream',
  'stream_options',
  'user',
  'metadata',
  'safety_identifier',
  'prompt_cache_key',
]);

/** `body` as it is compared: see the module comment. */
export function normaliseBody(body: unknown): unknown {
  if (!isObject(body)) return body;
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(body)) if (!IGNORED_FIELDS.has(key)) kept[key] = body[key];
  const input: unknown = kept['input'];
  if (Array.isArray(input)) {
    kept['input'] = (input as unknown[]).map((item) => {
      if (!isObject(item) || item['type'] !== 'reasoning') return item;
      const { id: _id, encrypted_content: _encrypted, ...rest } = item;
      return rest;
    });
  }
  return redactMedia(kept);
}

/** The same JSON text for equal values, whatever the order of their keys. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function wireOf(body: unknown): ReplayWire | undefined {
  if (!isObject(body)) return undefined;
  if (Array.isArray(body['messages'])) return 'chat';
  if (body['input'] !== undefined) return 'responses';
  return undefined;
}

/** Loads the journal at `path` (a file or a directory) for replay. */
export async function loadReplayJournal(path: string): Promise<ReplayJournal> {
  const journal: ReplayJournal = { recordings: [], skipped: [] };
  for await (const entry of readJournal(path)) {
    const place = `${entry.file}:${entry.line}`;
    if (entry.kind === 'damaged') {
      journal.skipped.push({ place, reason: `damaged line (${entry.reason})` });
      continue;
    }
    const { record } = entry;
    const last = record.upstreamRequests?.at(-1);
    const wire = wireOf(last?.body);
    if (last === undefined || wire === undefined) {
      journal.skipped.push({
        place,
        reason:
          last === undefined
            ? `exchange ${record.id} sent nothing upstream`
            : `exchange ${record.id} went upstream as a Messages body (the anthropic provider); the mock model answers Chat Completions and Responses requests`,
      });
      continue;
    }
    journal.recordings.push({ id: record.id, place, wire, body: normaliseBody(last.body), record });
  }
  return journal;
}

/** One place where a received body differs from a recorded one. */
interface Difference {
  path: string;
  recorded: unknown;
  received: unknown;
}

/** Paths where two values differ (at most `limit`), with both sides. */
function differences(
  recorded: unknown,
  received: unknown,
  path: string,
  found: Difference[],
  limit: number,
): void {
  if (found.length >= limit) return;
  if (isObject(recorded) && isObject(received)) {
    const keys = [...new Set([...Object.keys(recorded), ...Object.keys(received)])].sort();
    for (const key of keys)
      differences(recorded[key], received[key], path === '' ? key : `${path}.${key}`, found, limit);
    return;
  }
  if (Array.isArray(recorded) && Array.isArray(received)) {
    for (let index = 0; index < Math.max(recorded.length, received.length); index++) {
      differences(recorded[index], received[index], `${path}[${index}]`, found, limit);
    }
    return;
  }
  if (canonical(recorded) !== canonical(received))
    found.push({ path: path || '(the body)', recorded, received });
}

/** A value shown in a message: JSON, cut to 80 characters; `(absent)` for none. */
function shown(value: unknown): string {
  if (value === undefined) return '(absent)';
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

/** Answers requests from a loaded journal. */
export class Replayer {
  readonly #byBody = new Map<string, { recordings: Recording[]; next: number }>();
  readonly #recordings: Recording[];
  readonly #chunkDelayMs: number;

  constructor(journal: ReplayJournal, chunkDelayMs = 0) {
    this.#recordings = journal.recordings;
    this.#chunkDelayMs = chunkDelayMs;
    for (const recording of journal.recordings) {
      const key = `${recording.wire} ${canonical(recording.body)}`;
      const queue = this.#byBody.get(key);
      if (queue === undefined) this.#byBody.set(key, { recordings: [recording], next: 0 });
      else queue.recordings.push(recording);
    }
  }

  /** The plan answering `body` on `wire`, or the message of the 404 that says why there is none. */
  answer(wire: ReplayWire, body: unknown): { plan: Plan; recording: Recording } | { notFound: string } {
    const normalised = normaliseBody(body);
    const queue = this.#byBody.get(`${wire} ${canonical(normalised)}`);
    if (queue !== undefined) {
      const recording = queue.recordings[Math.min(queue.next, queue.recordings.length - 1)]!;
      queue.next += 1;
      const plan = replayPlan(recording.record, this.#chunkDelayMs);
      if (typeof plan !== 'string') return { plan, recording };
      return {
        notFound: `the recording ${recording.id} (${recording.place}) matches, but cannot be replayed: ${plan}`,
      };
    }
    return { notFound: this.#nearest(wire, normalised) };
  }

  /** The 404 message: the nearest recording and how it differs. */
  #nearest(wire: ReplayWire, body: unknown): string {
    const candidates = this.#recordings.filter((recording) => recording.wire === wire);
    const endpoint = wire === 'chat' ? 'Chat Completions' : 'Responses';
    if (candidates.length === 0) return `no ${endpoint} request was recorded in the replayed journal`;
    let best:
      | {
          recording: Recording;
          found: ReturnType<typeof Array<{ path: string; recorded: unknown; received: unknown }>>;
        }
      | undefined;
    for (const recording of candidates) {
      const found: Difference[] = [];
      differences(recording.body, body, '', found, best === undefined ? 1_000 : best.found.length);
      if (best === undefined || found.length < best.found.length) best = { recording, found };
    }
    const { recording, found } = best!;
    const listed = found
      .slice(0, 5)
      .map(
        (difference) =>
          `${difference.path}: recorded ${shown(difference.recorded)}, received ${shown(difference.received)}`,
      );
    return (
      `this request was not recorded; the nearest recorded one is exchange ${recording.id} (${recording.place}), ` +
      `which differs at ${found.length}${found.length >= 1_000 ? '+' : ''} place${found.length === 1 ? '' : 's'}: ${listed.join('; ')}`
    );
  }
}
