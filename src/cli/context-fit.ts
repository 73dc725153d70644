/**
 * Whether the upstream's context window can hold Claude Code at all, told before the first exchange:
 * Claude Code's very first request (its system prompt and tool definitions) is already large, so a
 * model server started with a small context refuses the first turn, and Claude Code then says only
 * "Prompt is too long" — compacting cannot help a conversation that is a single exchange. `tpx doctor`
 * fails on it and `tpx claude` warns before it launches Claude Code, each with the server flag that
 * gives the server a larger context.
 *
 * @module
 */
import { contextMargin } from '../transport/output-cap.js';
import type { ModelTransport, ServerKind, UpstreamReport } from '../transport/types.js';

/**
 * About how many input tokens Claude Code's first request of a session holds before the user has typed
 * much: its system prompt and the definitions of its built-in tools. Measured with Claude Code 2.1
 * (2.1.332) in an empty directory, by tpx's own input estimate: about 14,200 tokens; rounded up, since
 * a `CLAUDE.md`, MCP servers or skills only add to it.
 */
export const CLAUDE_CODE_FIRST_REQUEST_TOKENS = 15_000;

/**
 * The output room counted on top of the first request when `TPX_MAX_TOKENS` does not set one: enough for
 * a tool call that writes a file of a few hundred lines. (Claude Code asks for 32k or more; tpx lowers
 * that to what the window leaves, so the window need not hold all of it.)
 */
export const CLAUDE_CODE_MIN_OUTPUT_TOKENS = 4_096;

/**
 * The names Claude Code asks for, one per tier: the newest model of each tier in the Messages API's model
 * list as the official SDK (`@anthropic-ai/sdk` 1.14) states it; the 4.5 names are deprecated there. The
 * doctor shows where each would go and runs its chat check with the middle one.
 */
export const CLAUDE_CODE_MODELS = ['claude-opus-5-5', 'claude-sonnet-5-5', 'claude-haiku-5-5'] as const;

/** The context window the upstream stated for `model`: the model's own, else the server's. */
export function statedWindow(
  report: UpstreamReport,
  model: string,
): { tokens: number; source: string } | undefined {
  const own = report.models?.find((entry) => entry.id === model)?.contextWindow;
  if (own !== undefined) return { tokens: own, source: `${report.modelsUrl}, ${model}` };
  return report.contextWindow;
}

/** What Claude Code needs of the window, and whether a window of `windowTokens` holds it. */
export interface ContextFit {
  /** The first request plus the output room, in tokens. */
  neededTokens: number;
  /** Whether the window holds that, with the margin tpx keeps free of it. */
  fits: boolean;
  /** The smallest power of two that holds it: the value to give the server. */
  suggestedTokens: number;
}

function holds(windowTokens: number, neededTokens: number): boolean {
  return windowTokens - contextMargin(windowTokens) >= neededTokens;
}

/** Whether a window of `windowTokens` holds Claude Code's first request and `outputTokens` of answer. */
export function fitClaudeCode(windowTokens: number, outputTokens: number): ContextFit {
  const neededTokens = CLAUDE_CODE_FIRST_REQUEST_TOKENS + outputTokens;
  let suggestedTokens = 8_192;
  while (!holds(suggestedTokens, neededTokens)) suggestedTokens *= 2;
  return { neededTokens, fits: holds(windowTokens, neededTokens), suggestedTokens };
}

/** The server setting that raises the context window to `tokens`, for the server kind when known. */
export function contextWindowFix(kind: ServerKind | undefined, tokens: number): string {
  const fixes: Record<ServerKind, string> = {
    llamacpp: `restart llama-server with -c ${tokens} (--ctx-size ${tokens}); with -np N slots each slot gets 1/N of it, so give -c N×${tokens}`,
    vllm: `restart vLLM with --max-model-len ${tokens} (at most what the model supports)`,
    ollama: `run Ollama with OLLAMA_CONTEXT_LENGTH=${tokens} (ollama serve), or set num_ctx ${tokens} in the model's Modelfile (PARAMETER num_ctx ${tokens})`,
    lmstudio: `load the model in LM Studio with a context length of ${tokens} (its "Context Length" load setting)`,
  };
  if (kind !== undefined) return fixes[kind];
  return `give the model server a context of at least ${tokens} tokens: llama.cpp -c ${tokens}, vLLM --max-model-len ${tokens}, Ollama OLLAMA_CONTEXT_LENGTH=${tokens} (num_ctx), LM Studio's "Context Length" load setting`;
}

/**
 * The kind of server behind the transport: the one its dialect names, else what the server said of
 * itself (the report's `server`), else `undefined`.
 */
export function serverKindOf(transport: ModelTransport, report: UpstreamReport): ServerKind | undefined {
  const dialect = transport.selection.dialect?.name;
  if (dialect === 'llamacpp' || dialect === 'vllm' || dialect === 'ollama') return dialect;
  return report.server?.kind;
}

/** The servers' names, for people. */
export const SERVER_NAMES: Readonly<Record<ServerKind, string>> = {
  llamacpp: 'llama.cpp',
  vllm: 'vLLM',
  ollama: 'Ollama',
  lmstudio: 'LM Studio',
};

/** A window too small for Claude Code, for the models Claude Code's names map to. */
export interface TooSmallWindow {
  model: string;
  window: { tokens: number; source: string };
  fit: ContextFit;
}

/**
 * The first model (of `models`, the upstream models Claude Code's names map to) whose stated window
 * cannot hold Claude Code's first request and `outputTokens`; `undefined` when every stated one can.
 */
export function findTooSmallWindow(
  report: UpstreamReport,
  models: readonly string[],
  outputTokens: number,
): TooSmallWindow | undefined {
  for (const model of models) {
    const window = statedWindow(report, model);
    if (window === undefined) continue;
    const fit = fitClaudeCode(window.tokens, outputTokens);
    if (!fit.fits) return { model, window, fit };
  }
  return undefined;
}

/** The problem a too-small window is, in words. */
export function describeTooSmallWindow(tooSmall: TooSmallWindow, outputTokens: number): string {
  const { model, window, fit } = tooSmall;
  return (
    `the context window of ${model} is ${window.tokens} tokens (from ${window.source}): Claude Code's first ` +
    `request alone is about ${CLAUDE_CODE_FIRST_REQUEST_TOKENS} input tokens, and with ${outputTokens} ` +
    `tokens of room for its answer it needs about ${fit.neededTokens}; the first turn would fail with ` +
    '"Prompt is too long", which compacting cannot fix'
  );
}

/**
 * The warning lines `tpx claude` prints before it launches Claude Code when a window the upstream states
 * is too small for it (none when every stated window holds it, or none is stated).
 */
export async function warnOfSmallWindow(
  transport: ModelTransport,
  report: UpstreamReport,
  claudeModels: readonly string[],
): Promise<string[]> {
  const policy = transport.upstreamPolicy;
  if (policy === undefined) return [];
  const targets: string[] = [];
  for (const name of claudeModels) {
    const choice = await policy.resolveModel(name).catch(() => undefined);
    if (choice !== undefined && !targets.includes(choice.model)) targets.push(choice.model);
  }
  const outputTokens = policy.maxTokens ?? CLAUDE_CODE_MIN_OUTPUT_TOKENS;
  const tooSmall = findTooSmallWindow(report, targets, outputTokens);
  if (tooSmall === undefined) return [];
  const kind = serverKindOf(transport, report);
  return [
    `warning: ${describeTooSmallWindow(tooSmall, outputTokens)}`,
    `  fix: ${contextWindowFix(kind, tooSmall.fit.suggestedTokens)}`,
  ];
}
