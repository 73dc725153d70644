/**
 * What `tpx serve` and `tpx claude` print at start: where requests go and how (upstream URL, dialect,
 * model mapping, output cap, token source — never its value — and inbound auth), which settings the
 * provider selection made irrelevant, and the result of a short probe of the upstream. A failed probe
 * is a warning with the fix, not a refusal: model servers often start after the proxy.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { ModelTransport, UpstreamReport } from '../transport/types.js';
import { describeModelIds } from '../transport/model-map.js';
import { SERVER_NAMES } from './context-fit.js';
import { describeRoutesSetup, probeRoutedUpstreams } from './describe-routes-setup.js';
import { adviseOnError, adviseOnReport, endpointPastedAsBase } from './upstream-advice.js';

const TPX_ONLY = [
  'TPX_BASE_URL',
  'TPX_OAUTH_TOKEN',
  'TPX_OAUTH_TOKEN_FILE',
  'TPX_OAUTH_TOKEN_COMMAND',
  'TPX_DIALECT',
  'TPX_MODEL',
  'TPX_AZURE_API_VERSION',
] as const;

function isSet(env: Record<string, string | undefined>, name: string): boolean {
  const value = env[name];
  return value !== undefined && value.trim() !== '';
}

/**
 * The settings that are set but have no effect under the selected provider, each group with why:
 * `TPX_BASE_URL, TPX_OAUTH_TOKEN ignored: ANTHROPIC_API_KEY is set`.
 */
export function ignoredSettings(
  provider: ModelTransport['provider'],
  env: Record<string, string | undefined>,
): string[] {
  const notes: string[] = [];
  if (provider === 'anthropic') {
    const ignored = TPX_ONLY.filter((name) => isSet(env, name));
    if (ignored.length > 0) notes.push(`${ignored.join(', ')} ignored: ANTHROPIC_API_KEY is set`);
  }
  if (provider === 'tpx') {
    if (isSet(env, 'ANTHROPIC_BASE_URL')) {
      notes.push('ANTHROPIC_BASE_URL ignored: ANTHROPIC_API_KEY is not set, so requests go to TPX_BASE_URL');
    }
    const tokenSources = ['TPX_OAUTH_TOKEN', 'TPX_OAUTH_TOKEN_FILE', 'TPX_OAUTH_TOKEN_COMMAND'].filter(
      (name) => isSet(env, name),
    );
    if (tokenSources.length > 1)
      notes.push(`${tokenSources.slice(1).join(', ')} ignored: ${tokenSources[0]!} is set`);
  }
  return notes;
}

/**
 * The lines describing where requests go and how. The reasons below name environment variables; a flag
 * sets its variable, so `flagsGiven` (flag, variable) pairs are listed first to say which names the
 * user's flags took.
 */
export function describeSetup(
  transport: ModelTransport,
  env: Record<string, string | undefined>,
  flagsGiven: readonly (readonly [flag: string, variable: string])[] = [],
): string[] {
  const { selection } = transport;
  const policy = transport.upstreamPolicy;
  const lines: string[] = [];
  if (flagsGiven.length > 0) {
    const pairs = flagsGiven.map(([flag, variable]) => `${flag} as ${variable}`).join(', ');
    lines.push(`  flags: ${pairs} (each flag sets its variable, overriding the environment)`);
  }
  lines.push(`  provider: ${selection.provider} (${selection.reason})`);
  const routeLines = describeRoutesSetup(transport, env);
  // With routes each upstream's own line says where, how and with what token.
  if (routeLines.length > 0) return [...lines, ...routeLines];
  if (policy?.baseUrl !== undefined) lines.push(`  upstream: ${policy.baseUrl}`);
  if (selection.dialect !== undefined)
    lines.push(`  dialect: ${selection.dialect.name} (${selection.dialect.reason})`);
  if (selection.wire !== undefined) lines.push(`  wire: ${selection.wire.name} (${selection.wire.reason})`);
  if (selection.tokenSource !== undefined) {
    lines.push(`  token: from ${selection.tokenSource.origin} (${selection.tokenSource.kind})`);
  } else if (selection.provider === 'anthropic') {
    lines.push('  key: from ANTHROPIC_API_KEY');
  }
  if (policy !== undefined && selection.provider !== 'none') {
    const rules = policy.modelRules.map((rule) => `${rule.pattern}=${rule.model}`);
    if (policy.catchAllModel !== undefined) rules.push(`*=${policy.catchAllModel} (TPX_MODEL)`);
    const rest = policy.usesUpstreamModelList
      ? "other names: as requested when the upstream lists them, else the upstream's only model"
      : 'other names: as requested';
    lines.push(`  models: ${rules.length > 0 ? `${rules.join(', ')}; ` : ''}${rest}`);
    const caps: string[] = [];
    if (policy.maxTokens !== undefined) caps.push(`at most ${policy.maxTokens} (TPX_MAX_TOKENS)`);
    if (policy.capsToContextWindow) caps.push("within the upstream's context window where it states one");
    lines.push(`  max_tokens: ${caps.length > 0 ? caps.join(', ') : 'as requested'}`);
  }
  for (const note of ignoredSettings(selection.provider, env)) lines.push(`  note: ${note}`);
  return lines;
}

/** The lines for a successful probe: the models and context window the upstream stated. */
export function describeReport(report: UpstreamReport): string[] {
  const ids = report.models?.map((model) => model.id) ?? [];
  const lines = [`  upstream models: ${ids.length === 0 ? '(none listed)' : describeModelIds(ids)}`];
  const windows = (report.models ?? [])
    .filter((model) => model.contextWindow !== undefined)
    .map((model) => `${model.id} ${model.contextWindow!}`);
  if (report.server !== undefined) {
    const { kind, source } = report.server;
    lines.push(
      `  server: ${SERVER_NAMES[kind]} (detected from GET ${source})` +
        (kind === 'lmstudio' ? '' : `; --dialect ${kind} (TPX_DIALECT=${kind}) tunes requests for it`),
    );
  }
  if (report.contextWindow !== undefined) {
    lines.push(
      `  context window: ${report.contextWindow.tokens} tokens (from ${report.contextWindow.source})`,
    );
  } else if (windows.length > 0) {
    lines.push(`  context windows: ${windows.join(', ')} tokens`);
  }
  return lines;
}

/** How long the start-up probe may take. */
export const PROBE_TIMEOUT_MS = 3_000;

/**
 * Probes the upstream once. Resolves to the lines to print: what it serves, or a warning with the fix.
 */
export async function probeUpstream(transport: ModelTransport): Promise<string[]> {
  return (await probeUpstreamReport(transport)).lines;
}

/** {@link probeUpstream}, with the upstream's report when it answered with a model list. */
export async function probeUpstreamReport(
  transport: ModelTransport,
): Promise<{ lines: string[]; report?: UpstreamReport }> {
  let found: UpstreamReport | undefined;
  const lines = await probeLines(transport, (report) => (found = report));
  return found === undefined ? { lines } : { lines, report: found };
}

async function probeLines(
  transport: ModelTransport,
  keep: (report: UpstreamReport) => void,
): Promise<string[]> {
  if (transport.provider === 'none') {
    return [
      'warning: no upstream credentials, so every request will be answered 401.',
      `  fix: ${adviseOnError(new TransportError('MODEL_EAUTH', 'no credentials'), transport).fix}`,
    ];
  }
  const routed = await probeRoutedUpstreams(transport, PROBE_TIMEOUT_MS);
  if (routed !== undefined) return routed;
  const pasted = endpointPastedAsBase(transport);
  if (pasted !== undefined) return [`warning: ${pasted.problem}`, `  fix: ${pasted.fix}`];
  if (transport.inspectUpstream === undefined) return [];
  try {
    const report = await transport.inspectUpstream({ timeoutMs: PROBE_TIMEOUT_MS, maxRetries: 0 });
    const advice = adviseOnReport(report, transport);
    if (advice === undefined) {
      keep(report);
      return describeReport(report);
    }
    return [`warning: ${advice.problem}`, `  fix: ${advice.fix}`];
  } catch (error) {
    const advice = adviseOnError(error, transport);
    return [
      `warning: the upstream did not answer the start-up check: ${advice.problem}`,
      `  fix: ${advice.fix}`,
      '  (starting anyway: requests will reach the upstream once it answers)',
    ];
  }
}
