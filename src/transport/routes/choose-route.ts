/**
 * Which route an exchange takes: a pure function of the caller's request. Routes are tried in order; the
 * first whose every condition holds wins (the last one has none, so one always does).
 *
 * | condition          | holds when |
 * |--------------------|------------|
 * | `model`            | the requested model matches the glob (`*` any run, `?` one character; case-insensitive) |
 * | `hasImage`         | equals whether any message carries an `image` block (inside `tool_result` content too) |
 * | `inputTokensOver`  | the local estimate of the input tokens (the one `count_tokens` falls back to) is above it |
 * | `thinking`         | equals whether the request turns thinking on (`enabled` or `adaptive`) |
 *
 * The estimate is asked for only when a route that could still win needs it.
 *
 * @module
 */
import type { MessagesRequest } from '../../protocol/messages.js';
import type { ResolvedRoute } from './routes-config.js';

/** Whether any content block, at any depth of `tool_result` content, is an image. */
function hasImageBlock(content: unknown): boolean {
  if (!Array.isArray(content)) return false;
  for (const block of content as unknown[]) {
    if (typeof block !== 'object' || block === null) continue;
    const typed = block as { type?: unknown; content?: unknown };
    if (typed.type === 'image') return true;
    if (typed.type === 'tool_result' && hasImageBlock(typed.content)) return true;
  }
  return false;
}

/** Whether the request carries an image anywhere in its messages. */
export function requestHasImage(request: MessagesRequest): boolean {
  return request.messages.some((message) => hasImageBlock(message.content));
}

/** Whether the request turns thinking on. */
export function requestWantsThinking(request: MessagesRequest): boolean {
  const type = request.thinking?.type;
  return type === 'enabled' || type === 'adaptive';
}

/**
 * The route `request` takes.
 *
 * @param estimateInputTokens the local input-token estimate, asked for at most once and only when needed
 */
export async function chooseRoute(
  routes: readonly ResolvedRoute[],
  request: MessagesRequest,
  estimateInputTokens: () => Promise<number>,
): Promise<ResolvedRoute> {
  let estimate: number | undefined;
  for (const route of routes) {
    const { match } = route;
    if (route.modelMatcher !== undefined && !route.modelMatcher.test(request.model)) continue;
    if (match.hasImage !== undefined && match.hasImage !== requestHasImage(request)) continue;
    if (match.thinking !== undefined && match.thinking !== requestWantsThinking(request)) continue;
    if (match.inputTokensOver !== undefined) {
      estimate ??= await estimateInputTokens();
      if (!(estimate > match.inputTokensOver)) continue;
    }
    return route;
  }
  // Configuration checks make the last route unconditional; this is only reached if they did not.
  return routes[routes.length - 1]!;
}
