/**
 * The router of a transport created with routes: one `tpx` provider per upstream (each with its own
 * credentials, dialect, wire, and breaker), and for each route target the request shaper of its upstream
 * (the target's model, else the upstream's model map; the upstream's output cap). Built once, when the
 * transport is created.
 *
 * @module
 */
import { DIALECTS } from '../../translate/dialects.js';
import type { TransportObserver } from '../../providers/observer.js';
import type { Provider } from '../../providers/provider.js';
import type { MessagesRequest } from '../../protocol/messages.js';
import type { CountTextTokens } from '../../translate/estimate-input-tokens.js';
import { estimateInputTokensInSlices } from '../../providers/estimate-tokens-in-slices.js';
import { createProvider } from '../create-provider.js';
import type { ModelMapping } from '../model-map.js';
import type { ResolvedConfig } from '../select-provider.js';
import { createRequestShaper, type RequestShaper } from '../shape-request.js';
import type { UpstreamCatalog } from '../upstream-catalog.js';
import { chooseRoute } from './choose-route.js';
import { CircuitBreaker } from './circuit-breaker.js';
import type { ResolvedRoute, ResolvedRoutes, ResolvedUpstream, RouteTarget } from './routes-config.js';

/** One upstream, ready to send to. */
export interface RoutedUpstream {
  readonly name: string;
  readonly config: ResolvedUpstream;
  readonly provider: Provider;
  readonly catalog: UpstreamCatalog | undefined;
  readonly breaker: CircuitBreaker;
}

/** One route target, ready: its upstream and the shaper of requests sent there. */
export interface RoutedTarget {
  readonly upstream: RoutedUpstream;
  readonly target: RouteTarget;
  readonly shaper: RequestShaper;
}

/** Picks the targets of each exchange. */
export interface Router {
  readonly config: ResolvedRoutes;
  readonly upstreams: ReadonlyMap<string, RoutedUpstream>;
  /** The targets of the last route (the one every request may take), first to last. */
  readonly catchAll: readonly RoutedTarget[];
  /** The route `request` takes, and its targets in order. */
  plan(request: MessagesRequest): Promise<{ route: ResolvedRoute; targets: readonly RoutedTarget[] }>;
}

/** What the router needs from the transport being created. */
export interface RouterParts {
  generateId: () => string;
  observer: TransportObserver | undefined;
  /** The catalog of a provider, when the transport may inspect its upstreams. */
  catalogOf: (provider: Provider) => UpstreamCatalog | undefined;
  countText: () => Promise<CountTextTokens>;
  now?: () => number;
}

/** The selection of one upstream, as `createProvider` takes it. */
export function upstreamSelection(upstream: ResolvedUpstream, reason: string): ResolvedConfig {
  return {
    provider: 'tpx',
    reason,
    tpx: {
      tokenSpec: upstream.tokenSpec,
      baseUrl: upstream.baseUrl,
      model: undefined,
      tokenSource: `${upstream.tokenSpec.origin} is set`,
      dialect: upstream.dialect,
      dialectReason: upstream.dialectReason,
      azureApiVersion: upstream.azureApiVersion,
      wire: upstream.wire,
      wireReason: upstream.wireReason,
      // Each upstream reads tool calls written as text by its dialect's default.
      textToolCalls: DIALECTS[upstream.dialect].readsTextToolCalls,
    },
  };
}

function mappingOf(target: RouteTarget, upstream: ResolvedUpstream): ModelMapping {
  if (target.model !== undefined) return { rules: [], rulesSource: target.label, catchAll: target.model };
  return { rules: upstream.modelRules, rulesSource: `upstreams.${upstream.name}.modelMap` };
}

/** Builds the router; throws `MODEL_ECONFIG` as `createProvider` does. */
export function createRouter(config: ResolvedRoutes, parts: RouterParts): Router {
  const upstreams = new Map<string, RoutedUpstream>();
  for (const [name, upstream] of config.upstreams) {
    const provider = createProvider(
      upstreamSelection(upstream, `${config.source} names it`),
      parts.generateId,
      parts.observer,
    );
    upstreams.set(name, {
      name,
      config: upstream,
      provider,
      catalog: parts.catalogOf(provider),
      breaker: new CircuitBreaker(config.breaker, parts.now),
    });
  }
  const targetsOf = (route: ResolvedRoute): RoutedTarget[] =>
    route.targets.map((target) => {
      const upstream = upstreams.get(target.upstream)!;
      return {
        upstream,
        target,
        shaper: createRequestShaper({
          mapping: mappingOf(target, upstream.config),
          configuredCap: upstream.config.maxTokens,
          catalog: upstream.catalog,
          usesModelList: true,
          countText: parts.countText,
        }),
      };
    });
  const planned = new Map(config.routes.map((route) => [route, targetsOf(route)]));
  const estimate = (request: MessagesRequest) => async () =>
    estimateInputTokensInSlices(request, await parts.countText());
  return {
    config,
    upstreams,
    catchAll: planned.get(config.routes[config.routes.length - 1]!)!,
    async plan(request) {
      const route = await chooseRoute(config.routes, request, estimate(request));
      return { route, targets: planned.get(route)! };
    },
  };
}
