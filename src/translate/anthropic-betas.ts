/**
 * The `anthropic-beta` header on the translated path. A beta opts a request into features of Anthropic's
 * API; on the `tpx` provider each one the table knows is **mapped** (the translation already does what it
 * asks), **ignored** (it concerns Anthropic's servers, not what the upstream is asked), or **refused** by
 * name (the feature runs on Anthropic's servers and no OpenAI-compatible upstream has it). The table is
 * documented in docs/translation.md ("Betas"). Pure.
 *
 * @module
 */
import { invalidRequest } from './invalid-request.js';

/** What the translated path does with a beta. */
export type BetaTreatment = 'mapped' | 'ignored' | 'refused';

/** One family of betas (the name without its date), and why it is treated so. */
export interface BetaRule {
  treatment: BetaTreatment;
  reason: string;
}

/**
 * The betas the translated path knows, by family: a beta's name without its trailing date
 * (`interleaved-thinking-2025-05-14` → `interleaved-thinking`), so a newer dated version is treated as
 * its family is.
 */
export const BETA_RULES: Readonly<Record<string, BetaRule>> = {
  'interleaved-thinking': {
    treatment: 'mapped',
    reason: 'reasoning between tool calls becomes thinking blocks in place, replayed on the next turn',
  },
  'context-management': {
    treatment: 'mapped',
    reason: '`context_management` edits are applied before translation, or refused by name',
  },
  'structured-outputs': {
    treatment: 'mapped',
    reason: 'the output format becomes the upstream response format',
  },
  'prompt-caching': {
    treatment: 'mapped',
    reason: '`cache_control` is forwarded where the dialect takes it',
  },
  'extended-cache-ttl': { treatment: 'mapped', reason: 'as `prompt-caching`' },
  'fine-grained-tool-streaming': {
    treatment: 'mapped',
    reason: 'tool arguments already stream as the upstream sends them',
  },
  'advanced-tool-use': {
    treatment: 'mapped',
    reason: '`defer_loading` tools and `tool_reference` results are translated',
  },
  effort: { treatment: 'mapped', reason: '`output_config.effort` becomes the reasoning effort' },
  'claude-code': { treatment: 'ignored', reason: "names the client to Anthropic's servers" },
  oauth: {
    treatment: 'ignored',
    reason: "Anthropic's own credentials: the proxy uses its start-up credentials",
  },
  'token-efficient-tools': {
    treatment: 'ignored',
    reason: "how Anthropic's servers encode tools: the upstream encodes its own",
  },
  'output-128k': {
    treatment: 'ignored',
    reason: "raises Anthropic's output limit: the upstream's own applies, and `max_tokens` is sent",
  },
  'context-1m': {
    treatment: 'ignored',
    reason: "raises Anthropic's context window: the upstream's own applies",
  },
  'token-counting': { treatment: 'ignored', reason: '`count_tokens` is answered by a local estimate' },
  'files-api': {
    treatment: 'refused',
    reason: "file ids name files in Anthropic's store, which no OpenAI-compatible upstream has",
  },
  'mcp-client': { treatment: 'refused', reason: "the MCP connector runs on Anthropic's servers" },
  'code-execution': { treatment: 'refused', reason: "the code execution tool runs on Anthropic's servers" },
  skills: { treatment: 'refused', reason: "skills run in Anthropic's containers" },
};

/** A beta's family: its name without a trailing `-YYYY-MM-DD` or `-YYYYMMDD` date. */
export function betaFamily(beta: string): string {
  return beta.replace(/-(\d{4}-\d{2}-\d{2}|\d{8})$/, '');
}

/** The betas named in `anthropic-beta` header values: comma-separated, trimmed, blanks left out. */
export function readBetas(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  const values = typeof value === 'string' ? [value] : value;
  return values.flatMap((item) => item.split(',').map((beta) => beta.trim())).filter((beta) => beta !== '');
}

/**
 * Checks the caller's betas for the translated path: a beta of a refused family is refused by name;
 * every other beta (mapped, ignored, or unknown — an unknown beta can only unlock request fields, and
 * those are translated or refused by name where they appear) passes.
 *
 * @throws TransportError `MODEL_EINVAL` naming the first refused beta and why.
 */
export function checkBetasForTranslation(value: string | readonly string[] | undefined): void {
  for (const beta of readBetas(value)) {
    const family = betaFamily(beta);
    const rule = Object.hasOwn(BETA_RULES, family) ? BETA_RULES[family] : undefined;
    if (rule?.treatment === 'refused') {
      invalidRequest(
        `anthropic-beta: ${beta} cannot be honoured by an OpenAI-compatible upstream (${rule.reason}); ` +
          'remove it, or use the anthropic provider',
      );
    }
  }
}
