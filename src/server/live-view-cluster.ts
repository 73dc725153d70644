/**
 * The live view with `tpx serve --workers`: each worker keeps its own last exchanges, and a worker asked
 * for the view gathers every worker's through the primary, over the cluster's IPC channel. Nothing
 * crosses the channel per exchange: only when someone looks.
 *
 * ```
 * worker A ──live-request──▶ primary ──live-collect──▶ every worker (A included)
 * worker A ◀─live-response── primary ◀─live-collected─ every worker
 * ```
 *
 * A worker that does not answer within {@link COLLECT_TIMEOUT_MS} is left out of that view; a primary
 * that does not answer leaves the asking worker with its own exchanges.
 *
 * @module
 */
import type { Worker } from 'node:cluster';
import {
  mergeLiveExchanges,
  type LiveExchange,
  type LiveExchangeSource,
  type LiveExchanges,
} from './live-view.js';

const LIVE_REQUEST = 'tpx:live-request';
const LIVE_RESPONSE = 'tpx:live-response';
const LIVE_COLLECT = 'tpx:live-collect';
const LIVE_COLLECTED = 'tpx:live-collected';
/** How long the primary waits for the workers' lists. */
const COLLECT_TIMEOUT_MS = 1_000;
/** How long a worker waits for the primary's answer. */
const REQUEST_TIMEOUT_MS = 2_000;

function messageOf(value: unknown, type: string): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === type
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * In a worker: answers the primary's collections with this worker's exchanges (tagged with its pid), and
 * returns the source the view reads: every worker's, asked of the primary.
 */
export function workerLiveExchangeSource(local: LiveExchanges): LiveExchangeSource {
  const tagged = () => local.snapshot().map((exchange) => ({ ...exchange, worker: process.pid }));
  process.on('message', (message: unknown) => {
    const collect = messageOf(message, LIVE_COLLECT);
    if (collect !== undefined)
      process.send?.({ type: LIVE_COLLECTED, id: collect['id'], exchanges: tagged() });
  });
  let nextId = 0;
  return {
    exchanges() {
      const id = nextId++;
      return new Promise<LiveExchange[]>((resolve) => {
        const onMessage = (message: unknown) => {
          const response = messageOf(message, LIVE_RESPONSE);
          if (response === undefined || response['id'] !== id) return;
          done();
          resolve(
            Array.isArray(response['exchanges']) ? (response['exchanges'] as LiveExchange[]) : tagged(),
          );
        };
        const timer = setTimeout(() => {
          done();
          resolve(tagged());
        }, REQUEST_TIMEOUT_MS);
        const done = () => {
          clearTimeout(timer);
          process.off('message', onMessage);
        };
        process.on('message', onMessage);
        process.send?.({ type: LIVE_REQUEST, id, capacity: local.capacity });
      });
    },
  };
}

/** In the primary: gathers the workers' exchanges for the worker that asked. */
export class LiveExchangeGatherer {
  #nextCollection = 0;
  readonly #collections = new Map<
    number,
    { lists: LiveExchange[][]; waiting: Set<Worker>; finish: () => void }
  >();

  constructor(private readonly workers: () => Iterable<Worker>) {}

  /** Handles a live-view message from `worker`; returns whether it was one. */
  onMessage(worker: Worker, message: unknown): boolean {
    const request = messageOf(message, LIVE_REQUEST);
    if (request !== undefined) {
      const capacity = typeof request['capacity'] === 'number' ? request['capacity'] : 200;
      this.#collect(worker, request['id'], capacity);
      return true;
    }
    const collected = messageOf(message, LIVE_COLLECTED);
    if (collected === undefined) return false;
    const collection = this.#collections.get(collected['id'] as number);
    if (collection !== undefined && collection.waiting.delete(worker)) {
      if (Array.isArray(collected['exchanges']))
        collection.lists.push(collected['exchanges'] as LiveExchange[]);
      if (collection.waiting.size === 0) collection.finish();
    }
    return true;
  }

  #collect(asker: Worker, requestId: unknown, capacity: number): void {
    const id = this.#nextCollection++;
    const waiting = new Set([...this.workers()].filter((worker) => worker.isConnected()));
    const lists: LiveExchange[][] = [];
    const finish = () => {
      clearTimeout(timer);
      this.#collections.delete(id);
      if (asker.isConnected()) {
        asker.send({ type: LIVE_RESPONSE, id: requestId, exchanges: mergeLiveExchanges(lists, capacity) });
      }
    };
    const timer = setTimeout(finish, COLLECT_TIMEOUT_MS);
    this.#collections.set(id, { lists, waiting, finish });
    for (const worker of waiting) worker.send({ type: LIVE_COLLECT, id });
    if (waiting.size === 0) finish();
  }
}
