/**
 * The live view of `tpx serve`: the last exchanges, kept in memory, and what the proxy serves of them.
 *
 * | route | answer |
 * |-------|--------|
 * | `GET /tpx/exchanges` | JSON `{"upstreams": […], "exchanges": […]}`, exchanges newest first: `id`, `time`, `status`, `upstream`, `model`, `upstreamModel`, `stream`, `usage`, `durationMs`, `firstByteMs`, `error` (code and message). Behind the proxy token when one is set. |
 * | `GET /tpx/status` | an HTML page that shows them, updating every second (`live-view-page.ts`). The page itself holds no data and needs no token; its requests for `/tpx/exchanges` carry the token the user gives it. |
 *
 * Only the last `capacity` exchanges are kept (`tpx serve --live-exchanges N`). With `--workers`, each
 * worker keeps its own; a worker asked for the view gathers every worker's through the primary
 * (`live-view-cluster.ts`), so the page shows them all whichever worker serves it.
 *
 * @module
 */
import {
  exchangeHeadline,
  type ExchangeHeadline,
  type ExchangeRecorder,
  type FinishedExchange,
} from './exchange-recorder.js';

/** One exchange as the live view shows it. */
export interface LiveExchange extends ExchangeHeadline {
  /** Why it failed: its `MODEL_*` code and message. */
  error?: { code?: string; message: string };
  /** The worker that served it (its process id), with `--workers`. */
  worker?: number;
}

/** An upstream as the live view shows it. */
export interface LiveUpstream {
  name: string;
  provider: string;
  /** Where it is, when known (a URL; never a credential). */
  baseUrl?: string;
  /**
   * Its circuit breaker: `closed`, `open` or `half-open`, once upstreams have breakers; `null` until
   * then.
   */
  breaker: string | null;
}

/** Where the view's exchanges come from: this process's, or every worker's. */
export interface LiveExchangeSource {
  exchanges(): Promise<LiveExchange[]>;
}

/** The last `capacity` exchanges of this process, as a recorder the handler feeds. */
export class LiveExchanges implements ExchangeRecorder, LiveExchangeSource {
  readonly needsBodies = false;
  readonly #ring: (LiveExchange | undefined)[];
  #next = 0;

  constructor(readonly capacity: number) {
    this.#ring = new Array<LiveExchange | undefined>(capacity);
  }

  record(exchange: FinishedExchange): void {
    if (this.capacity === 0) return;
    const { record } = exchange;
    const live: LiveExchange = exchangeHeadline(exchange);
    if (record.errorMessage !== undefined) {
      live.error = { message: record.errorMessage };
      if (record.error !== undefined) live.error.code = record.error;
    }
    this.#ring[this.#next] = live;
    this.#next = (this.#next + 1) % this.capacity;
  }

  /** This process's exchanges, newest first. */
  snapshot(): LiveExchange[] {
    const newestFirst: LiveExchange[] = [];
    for (let offset = 1; offset <= this.capacity; offset++) {
      const entry = this.#ring[(this.#next - offset + this.capacity) % this.capacity];
      if (entry === undefined) break;
      newestFirst.push(entry);
    }
    return newestFirst;
  }

  exchanges(): Promise<LiveExchange[]> {
    return Promise.resolve(this.snapshot());
  }
}

/** Exchange lists of several processes as one, newest first, at most `capacity` long. */
export function mergeLiveExchanges(lists: readonly LiveExchange[][], capacity: number): LiveExchange[] {
  return lists
    .flat()
    .sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0))
    .slice(0, capacity);
}

/** What the proxy serves the live view from. */
export interface LiveView {
  source: LiveExchangeSource;
  upstreams: readonly LiveUpstream[];
}

/** The live view's routes, by path: whether each needs the proxy token. */
export const LIVE_VIEW_ROUTES: ReadonlyMap<string, { needsToken: boolean }> = new Map([
  ['/tpx/status', { needsToken: false }],
  ['/tpx/exchanges', { needsToken: true }],
]);

/** The body and content type of a live view route (`LIVE_VIEW_ROUTES`). */
export async function liveViewAnswer(
  view: LiveView,
  path: string,
): Promise<{ contentType: string; body: string; headers: Record<string, string> }> {
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  if (path === '/tpx/status') {
    const { STATUS_PAGE, STATUS_PAGE_CSP } = await import('./live-view-page.js');
    headers['content-security-policy'] = STATUS_PAGE_CSP;
    headers['x-content-type-options'] = 'nosniff';
    headers['referrer-policy'] = 'no-referrer';
    return { contentType: 'text/html; charset=utf-8', body: STATUS_PAGE, headers };
  }
  const exchanges = await view.source.exchanges();
  return {
    contentType: 'application/json',
    body: JSON.stringify({ upstreams: view.upstreams, exchanges }),
    headers,
  };
}
