/**
 * `output_config.effort` and `thinking` → the reasoning effort to ask for, and whether the reasoning
 * should come back summarized (docs/translation.md). Pure.
 *
 * @module
 */
import type { ThinkingConfig } from '../protocol/messages.js';
import { invalidRequest } from './invalid-request.js';

/** Thinking budgets below this map to `low`; from it up to `HIGH_EFFORT_BUDGET` to `medium`. */
const MEDIUM_EFFORT_BUDGET = 4096;
/** Thinking budgets from this up map to `high`. */
const HIGH_EFFORT_BUDGET = 16384;

/**
 * `output_config.effort` wins when present; otherwise the `thinking` config decides. A thinking budget
 * maps by bucket (< 4096 low, < 16384 medium, else high), `adaptive` to medium; `disabled` and thinking
 * types this library does not know leave the server's default.
 */
export function readEffort(effort: unknown, thinking: ThinkingConfig | undefined): string | undefined {
  if (effort !== undefined && effort !== null) {
    switch (effort) {
      case 'low':
        return 'low';
      case 'medium':
        return 'medium';
      case 'high':
        return 'high';
      // Many compatible servers know only low/medium/high: the top two levels become the highest.
      case 'xhigh':
      case 'max':
        return 'high';
      default:
        invalidRequest(
          `output_config.effort ${JSON.stringify(effort)} is not one of "low", "medium", "high", "xhigh", "max"`,
        );
    }
  }
  if (thinking === undefined) return undefined;
  switch (thinking.type) {
    case 'enabled': {
      const budget = thinking['budget_tokens'];
      if (typeof budget !== 'number' || !Number.isFinite(budget)) {
        invalidRequest('thinking.budget_tokens must be a number when thinking.type is "enabled"');
      }
      if (budget < MEDIUM_EFFORT_BUDGET) return 'low';
      if (budget < HIGH_EFFORT_BUDGET) return 'medium';
      return 'high';
    }
    case 'adaptive':
      return 'medium';
    default:
      // 'disabled', and types added to the protocol later: no reasoning_effort, the server decides.
      return undefined;
  }
}

/**
 * Whether the caller asked to see the model's thinking: thinking `enabled` or `adaptive`, and not shown as
 * `omitted`. A wire whose server hands back reasoning only when asked (the Responses API's summaries)
 * asks then.
 */
export function summarizesThinking(thinking: ThinkingConfig | undefined): boolean {
  const isThinking = thinking?.type === 'enabled' || thinking?.type === 'adaptive';
  return isThinking && thinking['display'] !== 'omitted';
}
