/**
 * The start-up banner's lines for a proxy with routes (`--config`): each upstream (URL, dialect, wire,
 * token source — never its value — and breaker), then each route with its targets in order.
 *
 * ```text
 *   upstreams (from routes.json; breaker: 3 failures, 30000 ms cool-down):
 *     local: http://127.0.0.1:8080/v1, llamacpp, chat wire, token from upstreams.local.token [closed]
 *   routes:
 *     1. model *haiku* → local:qwen3-4b
 *     2. any request → local:qwen3-32b, then cloud:qwen/qwen3-32b
 * ```
 *
 * @module
 */
import { isTransportError } from '../errors.js';
import { describeMatch } from '../transport/routes/describe-routes.js';
import type { ModelTransport } from '../transport/types.js';
import { describeReport } from './startup-report.js';

/** The single-upstream settings a routes file makes irrelevant. */
const SINGLE_UPSTREAM = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
  'TPX_BASE_URL',
  'TPX_OAUTH_TOKEN',
  'TPX_OAUTH_TOKEN_FILE',
  'TPX_OAUTH_TOKEN_COMMAND',
  'TPX_DIALECT',
  'TPX_WIRE',
  'TPX_MODEL',
  'TPX_MODEL_MAP',
  'TPX_MAX_TOKENS',
] as const;

/** The lines, or none for a transport without routes. */
export function describeRoutesSetup(
  transport: ModelTransport,
  env: Record<string, string | undefined> = {},
): string[] {
  const routes = transport.selection.routes;
  if (routes === undefined) return [];
  const states = new Map((transport.upstreamStates?.() ?? []).map((state) => [state.name, state]));
  const lines = [
    `  upstreams (from ${routes.source}; breaker: ${routes.breaker.failures} failures, ${routes.breaker.coolDownMs} ms cool-down):`,
  ];
  for (const upstream of routes.upstreams) {
    const cap = upstream.maxTokens === undefined ? '' : `, max_tokens at most ${upstream.maxTokens}`;
    const state = states.get(upstream.name)?.state ?? 'closed';
    lines.push(
      `    ${upstream.name}: ${upstream.baseUrl}, ${upstream.dialect}, ${upstream.wire} wire, token from ${upstream.tokenOrigin}${cap} [${state}]`,
    );
  }
  lines.push('  routes:');
  routes.routes.forEach((route, index) => {
    const [to, ...fallback] = route.targets;
    const then = fallback.length === 0 ? '' : `, then ${fallback.join(', then ')}`;
    lines.push(`    ${index + 1}. ${describeMatch(route.match)} → ${to!}${then}`);
  });
  const ignored = SINGLE_UPSTREAM.filter((name) => (env[name] ?? '').trim() !== '');
  if (ignored.length > 0) {
    lines.push(
      `  note: ${ignored.join(', ')} ignored: ${routes.source} names the upstreams and their settings`,
    );
  }
  return lines;
}

/**
 * The start-up check of a proxy with routes: each upstream asked at once; what each serves, or a warning
 * naming the upstream that did not answer and the key to check. Never a refusal: model servers often
 * start after the proxy. `undefined` for a transport without routes.
 */
export async function probeRoutedUpstreams(
  transport: ModelTransport,
  timeoutMs: number,
): Promise<string[] | undefined> {
  const routes = transport.selection.routes;
  if (routes === undefined || transport.inspectUpstreams === undefined) return undefined;
  const lines: string[] = [];
  for (const inspection of await transport.inspectUpstreams({ timeoutMs, maxRetries: 0 })) {
    if ('report' in inspection) {
      lines.push(
        `  upstream ${inspection.name}:`,
        ...describeReport(inspection.report).map((line) => `  ${line}`),
      );
      continue;
    }
    const problem = isTransportError(inspection.error) ? inspection.error.message : String(inspection.error);
    lines.push(
      `warning: the upstream ${inspection.name} (${inspection.baseUrl}) did not answer the start-up check: ${problem}`,
      `  fix: start it, or correct upstreams.${inspection.name}.baseUrl or its token in ${routes.source}; requests fall back past it meanwhile where a route allows`,
    );
  }
  return lines;
}
