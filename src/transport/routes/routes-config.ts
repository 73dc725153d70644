/**
 * The routes configuration (`tpx serve --config FILE`, the `routes` option): several upstreams behind the
 * `tpx` provider and the ordered routes that pick one per exchange. This file checks a parsed
 * configuration and resolves it; it does no I/O (the CLI reads the file, `createTokenSource` reads token
 * files and runs token commands).
 *
 * ```json
 * {
 *   "upstreams": {
 *     "local": { "baseUrl": "http://127.0.0.1:8080/v1", "token": "local", "dialect": "llamacpp" },
 *     "cloud": { "baseUrl": "https://openrouter.ai/api/v1", "tokenFile": "/home/me/.config/tpx/or-token" }
 *   },
 *   "routes": [
 *     { "match": { "model": "*haiku*" }, "to": "local:qwen3-4b" },
 *     { "to": "local:qwen3-32b", "fallback": ["cloud:qwen/qwen3-32b"] }
 *   ],
 *   "breaker": { "failures": 3, "coolDownMs": 30000 }
 * }
 * ```
 *
 * Every error is `MODEL_ECONFIG` and names the key at fault (`routes[1].fallback[0]`), never a token.
 *
 * @module
 */
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';
import { TransportError } from '../../errors.js';
import { formatPath } from '../../protocol/format-errors.js';
import { DEFAULT_TOKEN_COMMAND_TIMEOUT_MS, type TokenSpec } from '../../providers/token-source.js';
import {
  DEFAULT_AZURE_API_VERSION,
  DIALECTS,
  DIALECT_NAMES,
  detectDialect,
  type DialectName,
} from '../../translate/dialects.js';
import { globToRegExp, parseModelMap, type ModelRule } from '../model-map.js';

const Strict = { additionalProperties: false } as const;
const Text = () => Type.String({ minLength: 1 });
const Count = (minimum: number) => Type.Integer({ minimum });

const UpstreamSchema = Type.Object(
  {
    baseUrl: Text(),
    token: Type.Optional(Text()),
    tokenFile: Type.Optional(Text()),
    tokenCommand: Type.Optional(Text()),
    tokenCommandTimeoutMs: Type.Optional(Count(1)),
    dialect: Type.Optional(
      Type.Unsafe<DialectName>(Type.Union(DIALECT_NAMES.map((name) => Type.Literal(name)))),
    ),
    wire: Type.Optional(Type.Union([Type.Literal('chat'), Type.Literal('responses')])),
    maxTokens: Type.Optional(Count(1)),
    modelMap: Type.Optional(Type.Union([Type.String(), Type.Record(Type.String(), Text())])),
    azureApiVersion: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]+$' })),
  },
  Strict,
);

const MatchSchema = Type.Object(
  {
    model: Type.Optional(Text()),
    hasImage: Type.Optional(Type.Boolean()),
    inputTokensOver: Type.Optional(Count(0)),
    thinking: Type.Optional(Type.Boolean()),
  },
  Strict,
);

const RouteSchema = Type.Object(
  {
    match: Type.Optional(MatchSchema),
    to: Text(),
    fallback: Type.Optional(Type.Array(Text())),
  },
  Strict,
);

const RoutesConfigSchema = Type.Object(
  {
    upstreams: Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]+$' }), UpstreamSchema),
    routes: Type.Array(RouteSchema, { minItems: 1 }),
    breaker: Type.Optional(
      Type.Object({ failures: Type.Optional(Count(1)), coolDownMs: Type.Optional(Count(1)) }, Strict),
    ),
  },
  Strict,
);

/** A routes configuration as written (JSON). */
export type RoutesConfig = Static<typeof RoutesConfigSchema>;
/** One route's conditions as written; every one given must hold. */
export type RouteMatch = Static<typeof MatchSchema>;

const checker = Compile(RoutesConfigSchema);

/** The breaker's defaults: three consecutive failures open it for thirty seconds. */
export const DEFAULT_BREAKER = Object.freeze({ failures: 3, coolDownMs: 30_000 });

/** One upstream, resolved: what the `tpx` provider needs for it. Holds secrets: never log it. */
export interface ResolvedUpstream {
  readonly name: string;
  readonly baseUrl: string;
  readonly tokenSpec: TokenSpec;
  readonly dialect: DialectName;
  readonly dialectReason: string;
  readonly wire: 'chat' | 'responses';
  readonly wireReason: string;
  readonly azureApiVersion: string;
  readonly maxTokens: number | undefined;
  readonly modelRules: readonly ModelRule[];
}

/** Where a route sends an attempt: an upstream, and the model (else the upstream's model map decides). */
export interface RouteTarget {
  readonly upstream: string;
  readonly model: string | undefined;
  /** As written: `local:qwen3-4b`. */
  readonly label: string;
}

/** One route, resolved. */
export interface ResolvedRoute {
  /** Its place in the list, from 0. */
  readonly index: number;
  readonly match: RouteMatch;
  /** The `model` glob, compiled. */
  readonly modelMatcher: RegExp | undefined;
  /** `to`, then each `fallback`, in order. */
  readonly targets: readonly RouteTarget[];
}

/** A routes configuration, checked and resolved. */
export interface ResolvedRoutes {
  /** Where it came from, as messages name it (the file, or `the routes option`). */
  readonly source: string;
  readonly upstreams: ReadonlyMap<string, ResolvedUpstream>;
  readonly routes: readonly ResolvedRoute[];
  readonly breaker: { readonly failures: number; readonly coolDownMs: number };
}

function configError(source: string, message: string): TransportError {
  return new TransportError('MODEL_ECONFIG', `${source}: ${message}`);
}

/** The most useful schema error, naming the key: an unknown key first, then the deepest error. */
function describeSchemaError(errors: readonly TLocalizedValidationError[]): string {
  for (const error of errors) {
    if (error.keyword === 'additionalProperties') {
      const names = (error.params as { additionalProperties?: string[] }).additionalProperties ?? [];
      const at = error.instancePath === '' ? '' : `${formatPath(error.instancePath)}.`;
      return `unknown key ${names.map((name) => `${at}${name}`).join(', ')}`;
    }
  }
  for (const error of errors) {
    if (error.keyword === 'required') {
      const names = (error.params as { requiredProperties?: string[] }).requiredProperties ?? [];
      const at = error.instancePath === '' ? '' : `${formatPath(error.instancePath)}.`;
      return `${names.map((name) => `${at}${name}`).join(', ')}: is required`;
    }
  }
  const deepest = [...errors]
    .filter((error) => error.keyword !== 'boolean' && error.keyword !== 'anyOf')
    .sort((a, b) => b.instancePath.length - a.instancePath.length)[0];
  const chosen = deepest ?? errors[0];
  if (chosen === undefined) return 'is not a valid routes configuration';
  if (chosen.instancePath.startsWith('/upstreams/') && chosen.instancePath.endsWith('/dialect')) {
    return `${formatPath(chosen.instancePath)}: must be one of ${DIALECT_NAMES.join(', ')}`;
  }
  return `${formatPath(chosen.instancePath)}: ${chosen.message}`;
}

/** Reads `to` or a `fallback` entry: `upstream:model`, or `upstream` alone (its model map decides). */
function readTarget(text: string, key: string, upstreams: ReadonlySet<string>, source: string): RouteTarget {
  const colon = text.indexOf(':');
  const upstream = (colon === -1 ? text : text.slice(0, colon)).trim();
  const model = colon === -1 ? undefined : text.slice(colon + 1).trim();
  if (!upstreams.has(upstream)) {
    throw configError(
      source,
      `${key} names the upstream ${JSON.stringify(upstream)}, which is not under "upstreams" (known: ${[...upstreams].join(', ')})`,
    );
  }
  if (model === '') throw configError(source, `${key} has an empty model after "${upstream}:"`);
  return { upstream, model, label: model === undefined ? upstream : `${upstream}:${model}` };
}

function checkUrl(value: string, key: string, source: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw configError(source, `${key} must be an http:// or https:// URL, e.g. http://127.0.0.1:8000/v1`);
  }
  return value.replace(/\/+$/, '');
}

type UpstreamConfig = Static<typeof UpstreamSchema>;

/** The one token source of an upstream. */
function readTokenSpec(upstream: UpstreamConfig, key: string, source: string): TokenSpec {
  const given = (['token', 'tokenFile', 'tokenCommand'] as const).filter(
    (name) => upstream[name] !== undefined,
  );
  if (given.length > 1) {
    throw configError(
      source,
      `${key} has two token sources (${given.map((name) => `${key}.${name}`).join(', ')}); keep one`,
    );
  }
  if (given.length === 0) {
    throw configError(
      source,
      `${key} has no token source: set one of ${key}.token, ${key}.tokenFile, ${key}.tokenCommand (a local server without auth accepts any token, e.g. "token": "local")`,
    );
  }
  const origin = `${key}.${given[0]!}`;
  if (upstream.token !== undefined) return { kind: 'static', origin, token: upstream.token };
  if (upstream.tokenFile !== undefined) return { kind: 'file', origin, path: upstream.tokenFile };
  return {
    kind: 'command',
    origin,
    command: upstream.tokenCommand!,
    timeoutMs: upstream.tokenCommandTimeoutMs ?? DEFAULT_TOKEN_COMMAND_TIMEOUT_MS,
  };
}

function readModelRules(upstream: UpstreamConfig, key: string, source: string): ModelRule[] {
  const map = upstream.modelMap;
  if (map === undefined) return [];
  if (typeof map === 'string') {
    try {
      return parseModelMap(map, `${key}.modelMap`);
    } catch (error) {
      throw configError(source, (error as Error).message);
    }
  }
  return Object.entries(map).map(([pattern, model]) => ({ pattern, model, matcher: globToRegExp(pattern) }));
}

function resolveUpstream(name: string, upstream: UpstreamConfig, source: string): ResolvedUpstream {
  const key = `upstreams.${name}`;
  const baseUrl = checkUrl(upstream.baseUrl, `${key}.baseUrl`, source);
  const detected = detectDialect(baseUrl);
  const dialect: DialectName = upstream.dialect ?? detected ?? 'openai-generic';
  const dialectReason =
    upstream.dialect !== undefined
      ? `${key}.dialect is set`
      : detected !== undefined
        ? `detected from the host ${new URL(baseUrl).hostname}`
        : `the host ${new URL(baseUrl).hostname} is not a known service; set ${key}.dialect to choose another`;
  const wire = upstream.wire ?? DIALECTS[dialect].defaultWire;
  if (wire === 'responses' && DIALECTS[dialect].endpoint === 'vertex-openapi') {
    throw configError(
      source,
      `${key}.wire is "responses", but Vertex AI serves no Responses API; use "chat"`,
    );
  }
  return {
    name,
    baseUrl,
    tokenSpec: readTokenSpec(upstream, key, source),
    dialect,
    dialectReason,
    wire,
    wireReason: upstream.wire !== undefined ? `${key}.wire is set` : `the default of the ${dialect} dialect`,
    azureApiVersion: upstream.azureApiVersion ?? DEFAULT_AZURE_API_VERSION,
    maxTokens: upstream.maxTokens,
    modelRules: readModelRules(upstream, key, source),
  };
}

function resolveRoute(
  route: RoutesConfig['routes'][number],
  index: number,
  count: number,
  upstreams: ReadonlySet<string>,
  source: string,
): ResolvedRoute {
  const key = `routes[${index}]`;
  const hasConditions = route.match !== undefined && Object.keys(route.match).length > 0;
  if (index === count - 1 && hasConditions) {
    throw configError(
      source,
      `${key}.match: the last route must have no match, so that every request has a route`,
    );
  }
  if (index < count - 1 && !hasConditions) {
    throw configError(
      source,
      `${key} has no match, so the routes after it could never be chosen; give it a match or move it last`,
    );
  }
  const targets = [readTarget(route.to, `${key}.to`, upstreams, source)];
  (route.fallback ?? []).forEach((text, position) => {
    const target = readTarget(text, `${key}.fallback[${position}]`, upstreams, source);
    const earlier = targets.find((seen) => seen.label === target.label);
    if (earlier !== undefined) {
      throw configError(
        source,
        `${key}.fallback[${position}] falls back to ${target.label}, which is already in this route's chain: a fallback cycle`,
      );
    }
    targets.push(target);
  });
  const match = route.match ?? {};
  return {
    index,
    match,
    modelMatcher: match.model === undefined ? undefined : globToRegExp(match.model),
    targets,
  };
}

/**
 * Checks and resolves a parsed routes configuration.
 *
 * @param source how messages name it: the file (`routes.json`) or `the routes option`
 * @throws TransportError `MODEL_ECONFIG` naming the key at fault
 */
export function resolveRoutesConfig(value: unknown, source: string): ResolvedRoutes {
  if (!checker.Check(value)) throw configError(source, describeSchemaError(checker.Errors(value)));
  const config = value;
  const names = Object.keys(config.upstreams);
  if (names.length === 0) throw configError(source, 'upstreams: name at least one upstream');
  const upstreams = new Map(
    names.map((name) => [name, resolveUpstream(name, config.upstreams[name]!, source)]),
  );
  const known = new Set(names);
  const routes = config.routes.map((route, index) =>
    resolveRoute(route, index, config.routes.length, known, source),
  );
  return {
    source,
    upstreams,
    routes,
    breaker: {
      failures: config.breaker?.failures ?? DEFAULT_BREAKER.failures,
      coolDownMs: config.breaker?.coolDownMs ?? DEFAULT_BREAKER.coolDownMs,
    },
  };
}
