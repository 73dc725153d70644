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
import { describeMatch } from '../transport/routes/describe-routes.js';
import type { ModelTransport } from '../transport/types.js';

/** The lines, or none for a transport without routes. */
export function describeRoutesSetup(transport: ModelTransport): string[] {
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
  return lines;
}
