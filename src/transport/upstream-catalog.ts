/**
 * The upstream's model list and context window, asked once and kept for a while: every exchange that
 * needs them (model mapping without rules, output caps) reads the kept answer instead of asking again.
 *
 * A failed inspection is kept only briefly, so a model server that starts after the proxy is picked up
 * within seconds; a successful one for minutes, so a server restarted with another model is too.
 *
 * @module
 */
import type { UpstreamReport } from './types.js';

/** How long a successful inspection is used before the upstream is asked again. */
export const CATALOG_FRESH_MS = 5 * 60_000;
/** How long a failed inspection is remembered (the exchanges in that time go without a list). */
export const CATALOG_RETRY_MS = 10_000;

/** The kept inspection. */
export interface UpstreamCatalog {
  /** The latest report, asking the upstream when none is fresh; `undefined` when it could not be asked. */
  get(): Promise<UpstreamReport | undefined>;
  /** Keeps a report obtained elsewhere (an explicit `inspectUpstream` call). */
  remember(report: UpstreamReport): void;
}

/** Creates the catalog; `inspect` makes one inspection and may reject. */
export function createUpstreamCatalog(
  inspect: () => Promise<UpstreamReport>,
  now: () => number = Date.now,
): UpstreamCatalog {
  let kept: { report: Promise<UpstreamReport | undefined>; expiresAt: number } | undefined;
  return {
    get() {
      if (kept !== undefined && now() < kept.expiresAt) return kept.report;
      const entry = {
        // Until it settles, concurrent exchanges share this one inspection.
        expiresAt: Number.POSITIVE_INFINITY,
        report: inspect().then(
          (report) => {
            entry.expiresAt = now() + CATALOG_FRESH_MS;
            return report;
          },
          () => {
            entry.expiresAt = now() + CATALOG_RETRY_MS;
            return undefined;
          },
        ),
      };
      kept = entry;
      return entry.report;
    },
    remember(report) {
      kept = { report: Promise.resolve(report), expiresAt: now() + CATALOG_FRESH_MS };
    },
  };
}
