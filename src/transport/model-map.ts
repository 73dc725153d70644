/**
 * Model mapping: which upstream model a request for a given model goes to.
 *
 * Clients such as Claude Code ask for `claude-*` names (a cheap tier for background calls, a large one
 * for the work); a local server serves its own names. A map of `pattern=upstream-model` rules, globs on
 * the requested name, first match wins, says where each goes:
 *
 * ```text
 * TPX_MODEL_MAP='*haiku*=qwen3-4b,*=qwen3-32b'
 *   claude-haiku-4-5   → qwen3-4b
 *   claude-opus-4-1    → qwen3-32b
 * ```
 *
 * Without a map and without `TPX_MODEL` the upstream's own model list decides (see
 * {@link resolveModel}). Pure: the list is passed in.
 *
 * @module
 */
import { TransportError } from '../errors.js';

/** One `pattern=model` rule. */
export interface ModelRule {
  /** The glob as written: `*` any run of characters, `?` one character; case-insensitive. */
  readonly pattern: string;
  readonly model: string;
  readonly matcher: RegExp;
}

/** How a model was chosen, for logs, the banner and `tpx doctor`. */
export interface ModelChoice {
  /** The name sent upstream. */
  readonly model: string;
  /** Why: `TPX_MODEL_MAP rule *haiku*`, `TPX_MODEL`, `listed by the upstream`, `the upstream's only model`, … */
  readonly reason: string;
}

/** The rules and fallbacks that decide the upstream model. */
export interface ModelMapping {
  readonly rules: readonly ModelRule[];
  /** Where the rules came from, as messages name it (`TPX_MODEL_MAP`, `--model-map`). */
  readonly rulesSource: string;
  /** The catch-all after the rules (`TPX_MODEL`), if any. */
  readonly catchAll?: string;
}

/** A glob (`*` any run of characters, `?` one character) as a case-insensitive whole-name matcher. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const character of glob) {
    if (character === '*') source += '.*';
    else if (character === '?') source += '.';
    else source += character.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'i');
}

/**
 * Parses `pattern=model[,pattern=model…]`. Whitespace around entries is ignored; an empty text gives no
 * rules.
 *
 * @throws TransportError `MODEL_ECONFIG` naming `source` and the entry that cannot be read.
 */
export function parseModelMap(text: string, source: string): ModelRule[] {
  const rules: ModelRule[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const equals = entry.indexOf('=');
    const pattern = equals === -1 ? '' : entry.slice(0, equals).trim();
    const model = equals === -1 ? '' : entry.slice(equals + 1).trim();
    if (pattern === '' || model === '') {
      throw new TransportError(
        'MODEL_ECONFIG',
        `${source} has an entry that is not pattern=model: ${JSON.stringify(entry)}; ` +
          `expected e.g. '*haiku*=qwen3-4b,*=qwen3-32b'`,
      );
    }
    rules.push({ pattern, model, matcher: globToRegExp(pattern) });
  }
  return rules;
}

/** The first rule matching `requested`, if any. */
export function matchRule(rules: readonly ModelRule[], requested: string): ModelRule | undefined {
  return rules.find((rule) => rule.matcher.test(requested));
}

/** Whether a name looks like one of Anthropic's (what Claude Code and the SDK ask for by default). */
export function isClaudeModelName(name: string): boolean {
  return /claude/i.test(name);
}

/** What the upstream said about its models: the list, or why there is none. */
export interface UpstreamModelList {
  /** The ids the upstream lists, in its order; `undefined` when it has no usable list. */
  readonly ids: readonly string[] | undefined;
  /** Where the list comes from, for messages: `http://127.0.0.1:8000/v1/models`. */
  readonly url: string;
}

/** The model list shown in messages: at most `limit` names, then how many more. */
export function describeModelIds(ids: readonly string[], limit = 12): string {
  if (ids.length <= limit) return ids.join(', ');
  return `${ids.slice(0, limit).join(', ')} and ${ids.length - limit} more`;
}

/** Whether the mapping decides on its own, without asking the upstream for its list. */
export function needsModelList(mapping: ModelMapping, requested: string): boolean {
  return matchRule(mapping.rules, requested) === undefined && mapping.catchAll === undefined;
}

/**
 * Decides the upstream model for `requested`:
 *
 * | situation                                                    | upstream model |
 * |--------------------------------------------------------------|----------------|
 * | a rule matches                                               | the rule's model |
 * | else `TPX_MODEL` is set                                      | `TPX_MODEL` |
 * | else the upstream's list is unknown, or holds `requested`    | `requested`, unchanged |
 * | else the list holds exactly one model and `requested` is a Claude name | that model |
 * | else                                                         | refused: 404 naming the listed models and `TPX_MODEL_MAP` |
 *
 * @throws TransportError `MODEL_EINVAL` (404, `not_found_error`) in the last case, before anything is sent.
 */
export function resolveModel(
  mapping: ModelMapping,
  requested: string,
  upstream: UpstreamModelList | undefined,
): ModelChoice {
  const rule = matchRule(mapping.rules, requested);
  if (rule !== undefined) return { model: rule.model, reason: `${mapping.rulesSource} rule ${rule.pattern}` };
  if (mapping.catchAll !== undefined) return { model: mapping.catchAll, reason: 'TPX_MODEL' };
  const ids = upstream?.ids;
  if (ids === undefined || ids.length === 0) {
    return { model: requested, reason: 'as requested (the upstream lists no models)' };
  }
  if (ids.includes(requested)) return { model: requested, reason: 'as requested (listed by the upstream)' };
  if (ids.length === 1 && isClaudeModelName(requested)) {
    return { model: ids[0]!, reason: "the upstream's only model" };
  }
  throw new TransportError(
    'MODEL_EINVAL',
    `the upstream does not serve the model ${JSON.stringify(requested)}; ${upstream!.url} lists: ` +
      `${describeModelIds(ids)}. Map the requested names to served ones with TPX_MODEL_MAP (--model-map), ` +
      `e.g. '*haiku*=${ids[0]!},*=${ids[ids.length - 1]!}', set TPX_MODEL to one of them, or ask for one by name`,
    { status: 404, type: 'not_found_error' },
  );
}

/**
 * The mapping from the `modelMap` option (else `TPX_MODEL_MAP`) and the catch-all model.
 *
 * @throws TransportError `MODEL_ECONFIG` for a map that cannot be read.
 */
export function readModelMapping(
  option: string | undefined,
  env: Record<string, string | undefined>,
  catchAll: string | undefined,
): ModelMapping {
  const fromEnv = env['TPX_MODEL_MAP'];
  const rulesSource = option === undefined ? 'TPX_MODEL_MAP' : 'the modelMap option';
  const rules = parseModelMap(option ?? fromEnv ?? '', rulesSource);
  return catchAll === undefined ? { rules, rulesSource } : { rules, rulesSource, catchAll };
}
