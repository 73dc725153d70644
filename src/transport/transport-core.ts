/**
 * What every exchange of one transport shares.
 *
 * @module
 */
import type { ProviderName } from '../errors.js';
import type { Provider } from '../providers/provider.js';
import type { ExchangeRunner } from './exchange-runner.js';
import type { Router } from './routes/create-router.js';
import type { RequestShaper } from './shape-request.js';
import type { UpstreamCatalog } from './upstream-catalog.js';

/** The provider chosen at creation, the runner of its attempts, and what shapes requests for it. */
export interface TransportCore {
  /** The provider selected (`none` when there were no credentials). */
  readonly selected: ProviderName;
  readonly provider: Provider;
  readonly runner: ExchangeRunner;
  readonly shaper: RequestShaper;
  /** The upstream's kept inspection, when the transport may ask for it (`inspectUpstream` option). */
  readonly catalog: UpstreamCatalog | undefined;
  /** With routes: picks the upstream of each exchange (`provider` is then the catch-all route's first). */
  readonly router?: Router | undefined;
}
