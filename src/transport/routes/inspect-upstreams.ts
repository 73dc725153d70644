/**
 * Asks every upstream of a router what it serves (its model list, its context window), all at once: the
 * start-up banner and `tpx doctor --config` name each upstream that does not answer. Each inspection is
 * one exchange of its own, not retried; what it learns is kept in that upstream's catalog.
 *
 * @module
 */
import type { ExchangeRunner } from '../exchange-runner.js';
import type { ExchangeOptions, UpstreamInspection } from '../types.js';
import type { Router } from './create-router.js';
import { shownUrl } from './describe-routes.js';

/** Each upstream's report, or the error that kept it from answering; in the configuration's order. */
export function inspectUpstreams(
  runner: ExchangeRunner,
  router: Router,
  exchangeOptions: ExchangeOptions = {},
): Promise<UpstreamInspection[]> {
  runner.ensureOpen();
  return Promise.all(
    [...router.upstreams.values()].map(async (upstream): Promise<UpstreamInspection> => {
      const { name, config, provider } = upstream;
      const baseUrl = shownUrl(config.baseUrl);
      const inspect = provider.inspect?.bind(provider);
      try {
        if (inspect === undefined) throw new Error(`the upstream ${name} cannot be inspected`);
        const report = await runner.run({ maxRetries: 0, ...exchangeOptions }, (context, reportResponse) =>
          inspect(exchangeOptions, context, reportResponse),
        );
        upstream.catalog?.remember(report);
        return { name, baseUrl, report };
      } catch (error) {
        return { name, baseUrl, error };
      }
    }),
  );
}
