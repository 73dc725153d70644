/**
 * What one running mock model keeps between requests: its settings, the replies still to serve, the
 * requests it recorded, and the counters that number its ids. Shared by the server and the two answer
 * writers (Chat Completions and Responses).
 *
 * @module
 */
import type { Replayer } from './replay.js';
import type { MockReply } from './script.js';

/** One request as recorded, while the server may still mark it aborted. */
export interface MutableRecordedRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: unknown;
  aborted: boolean;
}

/** The state of one mock model server. */
export interface MockModelState {
  readonly model: string;
  readonly tokenDigest: Buffer | undefined;
  readonly chunkDelayMs: number;
  readonly replies: MockReply[];
  readonly requests: MutableRecordedRequest[];
  /** How many of the latest requests `requests` keeps (`Infinity`: all of them). */
  readonly maxRecordedRequests: number;
  /** One controller per response in progress, aborted when its client leaves or the server closes. */
  readonly inFlight: Set<AbortController>;
  /** Tool calls given an id by the server so far (ids stay unique for the server's life). */
  toolCallCount: number;
  /** In replay (`--replay`): the recorded exchanges that answer every request. */
  readonly replay: Replayer | undefined;
  /** Responses so far, on either endpoint (numbers the `chatcmpl-…`, `resp_…` and `x-request-id` values). */
  responseCount: number;
}

/** The next response's sequence number, padded as every id of the mock model is: `000001`. */
export function nextSequence(state: MockModelState): string {
  return String(++state.responseCount).padStart(6, '0');
}
