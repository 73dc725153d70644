/**
 * The routes of a transport as callers may see them (`transport.selection.routes`, the start-up banner,
 * `/readyz`): names, URLs without credentials, dialects, routes as written, and each upstream's breaker.
 * Never a token.
 *
 * @module
 */
import type { BreakerSnapshot } from './circuit-breaker.js';
import type { Router } from './create-router.js';
import type { RouteMatch } from './routes-config.js';

/** One upstream, as shown. */
export interface UpstreamDescription {
  readonly name: string;
  /** Without a user name or password. */
  readonly baseUrl: string;
  readonly dialect: string;
  readonly wire: 'chat' | 'responses';
  /** Where its token comes from (`upstreams.cloud.tokenFile`), never the value. */
  readonly tokenOrigin: string;
  readonly maxTokens?: number;
}

/** One route, as shown. */
export interface RouteDescription {
  readonly match: RouteMatch;
  /** `to`, then each fallback: `upstream:model` as written. */
  readonly targets: readonly string[];
}

/** The routes configuration, as shown. */
export interface RoutesDescription {
  /** The file (or `the routes option`) it came from. */
  readonly source: string;
  readonly upstreams: readonly UpstreamDescription[];
  readonly routes: readonly RouteDescription[];
  readonly breaker: { readonly failures: number; readonly coolDownMs: number };
}

/** One upstream's breaker, now. */
export interface UpstreamState extends BreakerSnapshot {
  readonly name: string;
}

/** A URL as it may be shown: without a user name or password. */
export function shownUrl(value: string): string {
  const url = new URL(value);
  url.username = '';
  url.password = '';
  return url.toString().replace(/\/+$/, '');
}

/** The frozen description of a router's configuration. */
export function describeRoutes(router: Router): RoutesDescription {
  const { config } = router;
  return Object.freeze({
    source: config.source,
    upstreams: Object.freeze(
      [...config.upstreams.values()].map((upstream) =>
        Object.freeze({
          name: upstream.name,
          baseUrl: shownUrl(upstream.baseUrl),
          dialect: upstream.dialect,
          wire: upstream.wire,
          tokenOrigin: upstream.tokenSpec.origin,
          ...(upstream.maxTokens === undefined ? {} : { maxTokens: upstream.maxTokens }),
        }),
      ),
    ),
    routes: Object.freeze(
      config.routes.map((route) =>
        Object.freeze({
          match: Object.freeze({ ...route.match }),
          targets: Object.freeze(route.targets.map((target) => target.label)),
        }),
      ),
    ),
    breaker: Object.freeze({ ...config.breaker }),
  });
}

/** Each upstream's breaker, now. */
export function upstreamStates(router: Router): UpstreamState[] {
  return [...router.upstreams.values()].map((upstream) => ({
    name: upstream.name,
    ...upstream.breaker.snapshot(),
  }));
}

/** A route's conditions in words: `model *haiku*, hasImage`; `(any request)` for the last. */
export function describeMatch(match: RouteMatch): string {
  const parts: string[] = [];
  if (match.model !== undefined) parts.push(`model ${match.model}`);
  if (match.hasImage !== undefined) parts.push(match.hasImage ? 'has an image' : 'has no image');
  if (match.inputTokensOver !== undefined) parts.push(`input over ${match.inputTokensOver} tokens`);
  if (match.thinking !== undefined) parts.push(match.thinking ? 'thinking on' : 'thinking off');
  return parts.length === 0 ? 'any request' : parts.join(' and ');
}
