/**
 * Output caps: the `max_tokens` actually sent upstream.
 *
 * Clients ask for what the largest Anthropic model can write (Claude Code: 32k to 128k tokens); a local
 * server with a 32k context refuses such a request outright (vLLM: 400 "max_tokens is too large"). The
 * cap is the smallest of:
 *
 * - what the client asked for;
 * - `TPX_MAX_TOKENS` (`--max-tokens`), when set;
 * - when the server states its context window: window − estimated input − a safety margin.
 *
 * When not even one output token fits, the request is refused before it is sent, as Anthropic refuses
 * a prompt that is too long (400 `invalid_request_error`, "prompt is too long"), so a client can
 * compact its conversation and try again. Pure: the estimate is passed in.
 *
 * @module
 */
import { TransportError } from '../errors.js';

/** The margin kept free of the context window: the estimate is not the server's own tokenizer. */
export function contextMargin(contextWindow: number): number {
  return Math.max(64, Math.ceil(contextWindow * 0.05));
}

/** What decides the cap. */
export interface OutputCapInput {
  /** The client's `max_tokens`. */
  requested: number;
  /** `TPX_MAX_TOKENS`, when set. */
  configuredCap?: number | undefined;
  /** The server's context window in tokens, when known. */
  contextWindow?: number | undefined;
  /** The estimated input tokens (needed only with `contextWindow`). */
  estimatedInputTokens?: number | undefined;
}

/** The `max_tokens` to send, and why it is lower than asked (`undefined` when unchanged). */
export interface OutputCap {
  maxTokens: number;
  reason?: string;
}

/**
 * The `max_tokens` to send upstream.
 *
 * @throws TransportError `MODEL_EINVAL` (400) when the estimated input leaves no room in the window.
 *
 * @example
 * capOutputTokens({ requested: 128_000, contextWindow: 32_768, estimatedInputTokens: 20_000 })
 * // → { maxTokens: 11_129, reason: 'the context window of 32768 tokens, less about 20000 input tokens and a margin of 1639' }
 */
export function capOutputTokens(input: OutputCapInput): OutputCap {
  let maxTokens = input.requested;
  let reason: string | undefined;
  if (input.configuredCap !== undefined && input.configuredCap < maxTokens) {
    maxTokens = input.configuredCap;
    reason = `TPX_MAX_TOKENS is ${input.configuredCap}`;
  }
  const window = input.contextWindow;
  if (window !== undefined) {
    const inputTokens = input.estimatedInputTokens ?? 0;
    const margin = contextMargin(window);
    const room = window - inputTokens - margin;
    if (room < 1) {
      throw new TransportError(
        'MODEL_EINVAL',
        `prompt is too long: about ${inputTokens} input tokens, and the upstream's context window is ` +
          `${window} tokens (with a margin of ${margin}); shorten or compact the conversation, or give the ` +
          'model server a larger context',
        { status: 400, type: 'invalid_request_error' },
      );
    }
    if (room < maxTokens) {
      maxTokens = room;
      reason = `the context window of ${window} tokens, less about ${inputTokens} input tokens and a margin of ${margin}`;
    }
  }
  return reason === undefined ? { maxTokens } : { maxTokens, reason };
}

/**
 * The configured cap: the `maxOutputTokens` option, else `TPX_MAX_TOKENS`; `undefined` when neither.
 *
 * @throws TransportError `MODEL_ECONFIG` for anything but a whole number above 0.
 */
export function readConfiguredCap(
  option: number | undefined,
  env: Record<string, string | undefined>,
): number | undefined {
  const fromEnv = env['TPX_MAX_TOKENS']?.trim();
  const value = option ?? (fromEnv === undefined || fromEnv === '' ? undefined : Number(fromEnv));
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value <= 0) {
    const name = option === undefined ? 'TPX_MAX_TOKENS' : 'the maxOutputTokens option';
    throw new TransportError(
      'MODEL_ECONFIG',
      `${name} must be a whole number of tokens above 0, got ${JSON.stringify(option ?? fromEnv)}`,
    );
  }
  return value;
}
