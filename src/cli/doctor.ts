/**
 * `tpx doctor`: says what the proxy would do and checks each part of it, printing only what it checked.
 *
 * 1. the configuration (provider, why, upstream URL, dialect, token source, mapping, cap, ignored settings);
 * 2. the base URL's shape (an endpoint pasted whole is refused before any call);
 * 3. the model list (`GET …/models`): a JSON list, or what answered instead (an HTML page, a 404 — then
 *    `…/v1/models` is tried, to suggest the URL that works);
 * 4. the mapping of Claude Code's model names against that list;
 * 5. the context window the upstream states, against what Claude Code's first request needs;
 * 6. one tiny chat request (at most 16 output tokens) to the endpoint of the wire in use — Chat
 *    Completions, the Responses API (`--wire responses`) or Messages — which must come back as a real
 *    answer, translated.
 *
 * Exit 0 only when every check passed; 1 when one failed (each failure prints its fix); 2 for a
 * configuration that cannot work.
 *
 * @module
 */
import { TransportError, isTransportError } from '../errors.js';
import { responsesUrl } from '../providers/tpx-responses-wire.js';
import { DIALECTS, type DialectName } from '../translate/dialects.js';
import { createTransport } from '../transport/create-transport.js';
import type { ModelTransport, UpstreamReport } from '../transport/types.js';
import { EXIT_EXCHANGE_ERROR, EXIT_OK, EXIT_USAGE, type CliIo } from './output.js';
import {
  CLAUDE_CODE_FIRST_REQUEST_TOKENS,
  CLAUDE_CODE_MODELS,
  CLAUDE_CODE_MIN_OUTPUT_TOKENS,
  contextWindowFix,
  describeTooSmallWindow,
  findTooSmallWindow,
  serverKindOf,
  statedWindow,
} from './context-fit.js';
import { describeError, parse } from './parse-flags.js';
import { checkRoutedUpstreams } from './doctor-routes.js';
import { PROXY_FLAGS, createCliTransport, readProxySettings, type ProxySettings } from './proxy-settings.js';
import { describeModelIds } from '../transport/model-map.js';
import { describeReport, describeSetup } from './startup-report.js';
import {
  adviseOnError,
  adviseOnReport,
  baseUrlVariable,
  endpointPastedAsBase,
  USUAL_PORTS,
} from './upstream-advice.js';

export const DOCTOR_HELP = `Usage: tpx doctor [--model name] [--base-url URL] [--token T] [--dialect D] [--wire W] [--model-map RULES]

Shows what tpx would do with this configuration and checks every part of it, printing the URL it calls:
the provider and why (never a secret), the dialect, the model mapping and output cap, the upstream's
model list, whether its context window holds Claude Code's first request (about 15000 tokens) and room
for the answer (the server flag that raises it when not), and one tiny chat request (at most 16 output tokens) that must come back as a real answer.
Each failed check prints its fix. Exit 0 only when every check passed.

Options:
  --model <name>   the model for the chat check (default: what Claude Code asks, claude-sonnet-5-5,
                   mapped as the proxy would)
  --base-url, --token, --dialect, --wire, --model-map, --max-tokens, --timeout …   as for tpx serve
                   (with --wire responses the chat check posts to {base}/responses)
                   (a local server without auth accepts any token, e.g. --token local)
  --config <file>  a routes file (docs/routes.md): every upstream in it is checked, each failing one named
  --probe          accepted for scripts written for older versions; the chat check always runs
`;

const DEFAULT_CHECK_MODEL: string = CLAUDE_CODE_MODELS[1];
const CHECK_TIMEOUT_MS = 10_000;
const CHAT_TIMEOUT_MS = 60_000;

function fail(io: CliIo, what: string, problem: string, fix: string): number {
  io.stdout(`${what}: FAILED\n  ${problem}\n  fix: ${fix}\n`);
  return EXIT_EXCHANGE_ERROR;
}

/** The model list, or the failure's exit code after printing it. */
async function checkModelList(
  transport: ModelTransport,
  env: Record<string, string | undefined>,
  io: CliIo,
): Promise<UpstreamReport | number> {
  const inspect = transport.inspectUpstream!.bind(transport);
  let report: UpstreamReport;
  try {
    report = await inspect({ timeoutMs: CHECK_TIMEOUT_MS, maxRetries: 0 });
  } catch (error) {
    const advice = adviseOnError(error, transport);
    return fail(io, 'model list', advice.problem, advice.fix);
  }
  io.stdout(`model list: GET ${report.modelsUrl} → ${report.modelsStatus} ${report.modelsContentType}\n`);
  const advice = adviseOnReport(report, transport);
  if (advice === undefined) {
    io.stdout(`${describeReport(report).join('\n')}\n`);
    return report;
  }
  // A base URL without /v1 is the most common mistake: if the /v1 form answers with a list, say exactly that.
  const base = transport.upstreamPolicy?.baseUrl;
  if (transport.provider === 'tpx' && base !== undefined && !/\/v1$/.test(base)) {
    const alternative = createTransport({ env: { ...env, TPX_BASE_URL: `${base}/v1` } });
    try {
      const other = await alternative.inspectUpstream!({ timeoutMs: CHECK_TIMEOUT_MS, maxRetries: 0 });
      if (other.models !== undefined) {
        return fail(
          io,
          'model list',
          `${report.modelsUrl} ${report.problem ?? 'is not a model list'}, but ${other.modelsUrl} lists ${other.models.length} model(s)`,
          `set TPX_BASE_URL=${base}/v1 (--base-url ${base}/v1)`,
        );
      }
    } catch {
      // The alternative answers no better: the advice for the URL as given stands.
    } finally {
      await alternative.close();
    }
  }
  return fail(io, 'model list', advice.problem, advice.fix);
}

/**
 * Where Claude Code's names would go: the upstream models they map to, or a failure's exit code after
 * printing it.
 */
async function checkMapping(
  transport: ModelTransport,
  report: UpstreamReport,
  io: CliIo,
): Promise<string[] | number> {
  const policy = transport.upstreamPolicy;
  if (policy === undefined) return [];
  let failed: { name: string; message: string } | undefined;
  const lines: string[] = [];
  const targets: string[] = [];
  for (const name of CLAUDE_CODE_MODELS) {
    try {
      const choice = await policy.resolveModel(name);
      lines.push(`  ${name} → ${choice.model} (${choice.reason})`);
      if (!targets.includes(choice.model)) targets.push(choice.model);
    } catch (error) {
      lines.push(`  ${name} → refused`);
      failed ??= { name, message: error instanceof Error ? error.message : String(error) };
    }
  }
  io.stdout(`model mapping (Claude Code's names):\n${lines.join('\n')}\n`);
  if (failed === undefined) return checkTargetsListed(targets, report, io);
  return fail(
    io,
    'model mapping',
    failed.message,
    "set TPX_MODEL_MAP (--model-map), e.g. '*haiku*=small-model,*=large-model'",
  );
}

/**
 * Whether each model Claude Code's names map to is one the upstream lists (Ollama's `name` for
 * `name:latest` included): a rule or `TPX_MODEL` naming a model the server does not serve fails at once,
 * with a listed id as the fix. The targets, or a failure's exit code after printing it.
 */
function checkTargetsListed(targets: string[], report: UpstreamReport, io: CliIo): string[] | number {
  const ids = report.models?.map((model) => model.id) ?? [];
  if (ids.length === 0) return targets;
  const missing = targets.find((target) => !ids.includes(target) && !ids.includes(`${target}:latest`));
  if (missing === undefined) return targets;
  return fail(
    io,
    'model mapping',
    `Claude Code's names map to "${missing}", but the upstream does not serve the model "${missing}": it lists ${describeModelIds(ids)}`,
    `set TPX_MODEL_MAP (--model-map) to models it lists, e.g. '*=${ids[0]!}' (or TPX_MODEL to one of them)`,
  );
}

/** Says that the dialect the server was detected as is the one the chat check uses. */
function describeDetectedDialect(transport: ModelTransport, report: UpstreamReport, io: CliIo): void {
  const kind = report.server?.kind;
  if (kind === undefined || kind === 'lmstudio') return;
  if (transport.selection.dialect?.name !== 'openai-generic') return;
  io.stdout(`  dialect: ${kind} (detected from what the server says of itself; the chat check uses it)\n`);
}

/**
 * Whether the context window the upstream states (for each model Claude Code's names map to) holds
 * Claude Code's first request and room for its answer; a failure's exit code after printing it.
 */
function checkContextWindow(
  transport: ModelTransport,
  report: UpstreamReport,
  targets: readonly string[],
  io: CliIo,
): number | undefined {
  const outputTokens = transport.upstreamPolicy?.maxTokens ?? CLAUDE_CODE_MIN_OUTPUT_TOKENS;
  const tooSmall = findTooSmallWindow(report, targets, outputTokens);
  if (tooSmall !== undefined) {
    const kind = serverKindOf(transport, report);
    return fail(
      io,
      'context window',
      describeTooSmallWindow(tooSmall, outputTokens),
      contextWindowFix(kind, tooSmall.fit.suggestedTokens),
    );
  }
  const needed = CLAUDE_CODE_FIRST_REQUEST_TOKENS + outputTokens;
  const stated = targets.some((model) => statedWindow(report, model) !== undefined);
  io.stdout(
    stated
      ? `context window: holds Claude Code's first request (about ${CLAUDE_CODE_FIRST_REQUEST_TOKENS} tokens) and ${outputTokens} output tokens\n`
      : `context window: not stated by the upstream (Claude Code needs about ${needed} tokens: its first request is about ${CLAUDE_CODE_FIRST_REQUEST_TOKENS})\n`,
  );
  return undefined;
}

/** Whether the transport speaks the Responses API upstream (`TPX_WIRE=responses`, `--wire responses`). */
function isResponsesWire(transport: ModelTransport): boolean {
  return transport.selection.wire?.name === 'responses';
}

/** The URL the chat check posts to: the Messages, Responses or Chat Completions endpoint. */
function chatEndpoint(transport: ModelTransport): string {
  const base = transport.upstreamPolicy?.baseUrl ?? '';
  if (transport.provider === 'anthropic') return `${base}/v1/messages`;
  if (!isResponsesWire(transport)) return `${base}/chat/completions`;
  const dialect = transport.selection.dialect?.name;
  const profile = dialect !== undefined && dialect in DIALECTS ? DIALECTS[dialect as DialectName] : undefined;
  return responsesUrl(base, profile);
}

/** The fix for a failed chat check. */
function chatFix(error: unknown, transport: ModelTransport): string {
  const variable = baseUrlVariable(transport);
  if (!isTransportError(error)) return 'unexpected failure; please report it';
  if (error.status === 404 && /does not serve/.test(error.message)) {
    return "set TPX_MODEL_MAP (--model-map) to map requested names to a model listed above, e.g. '*=<model>'";
  }
  if (error.status === 404 && isResponsesWire(transport)) {
    return `the server has no Responses endpoint (see the URL above): use the chat wire (TPX_WIRE=chat, --wire chat), or check ${variable}`;
  }
  if (error.status === 404) return `check ${variable}: the chat endpoint is not there (see the URL above)`;
  if (error.status === 405 || error.status === 501) {
    return `the server at ${transport.upstreamPolicy?.baseUrl ?? variable} does not accept the API's POST requests: it is not a model API (check the port: ${USUAL_PORTS})`;
  }
  if (error.code === 'MODEL_EPROTO') {
    const what = isResponsesWire(transport) ? 'a Responses API' : 'a Chat Completions';
    return `the answer was not ${what} body: ${variable} points at something that is not a model API (check the port: ${USUAL_PORTS})`;
  }
  return adviseOnError(error, transport).fix;
}

async function checkChat(transport: ModelTransport, model: string, io: CliIo): Promise<number> {
  const endpoint = chatEndpoint(transport);
  io.stdout(`chat: POST ${endpoint} (model ${model}, max_tokens 16)\n`);
  try {
    const message = await transport.send(
      { model, max_tokens: 16, messages: [{ role: 'user', content: 'Reply with the word ok.' }] },
      { timeoutMs: CHAT_TIMEOUT_MS, maxRetries: 0 },
    );
    const text = message.content
      .map((block) => (block.type === 'text' ? (block as { text: string }).text : `[${block.type}]`))
      .join(' ')
      .slice(0, 60);
    io.stdout(
      `  answered: stop_reason ${String(message.stop_reason)}, ${message.usage.output_tokens} output tokens: ${JSON.stringify(text)}\n`,
    );
    return EXIT_OK;
  } catch (error) {
    return fail(io, 'chat', describeError(error), chatFix(error, transport));
  }
}

/**
 * Runs `check` with a transport for the dialect the server was detected as, when no dialect was named
 * (and the detected server has one), else with `transport` itself.
 */
async function withDetectedDialect(
  transport: ModelTransport,
  report: UpstreamReport,
  settings: ProxySettings,
  check: (transport: ModelTransport) => Promise<number>,
): Promise<number> {
  const kind = report.server?.kind;
  if (kind === undefined || kind === 'lmstudio' || transport.selection.dialect?.name !== 'openai-generic') {
    return check(transport);
  }
  const detected = createCliTransport(
    { ...settings.transportOptions, env: { ...settings.env, TPX_DIALECT: kind }, inspectUpstream: true },
    settings,
  );
  try {
    return await check(detected);
  } finally {
    await detected.close();
  }
}

/** Runs `tpx doctor`. */
export async function runDoctor(args: string[], io: CliIo): Promise<number> {
  const { values } = parse(
    args,
    { model: { type: 'string' }, probe: { type: 'boolean' }, ...PROXY_FLAGS },
    false,
  );
  if (values['help'] === true) {
    io.stdout(DOCTOR_HELP);
    return EXIT_OK;
  }
  const settings = readProxySettings(values, io.env);
  let transport: ModelTransport;
  try {
    transport = createCliTransport(
      { ...settings.transportOptions, env: settings.env, inspectUpstream: true },
      settings,
    );
  } catch (error) {
    io.stdout(`configuration: invalid\n  ${describeError(error)}\n`);
    return EXIT_USAGE;
  }
  try {
    io.stdout(`configuration:\n${describeSetup(transport, settings.env, settings.flagsGiven).join('\n')}\n`);
    if (transport.selection.routes !== undefined) {
      const requested = typeof values['model'] === 'string' ? values['model'] : DEFAULT_CHECK_MODEL;
      return await checkRoutedUpstreams(transport, settings.transportOptions, requested, io);
    }
    if (transport.provider === 'none') {
      const advice = adviseOnError(new TransportError('MODEL_EAUTH', 'no credentials'), transport);
      return fail(io, 'upstream', transport.selection.reason, advice.fix);
    }
    const pasted = endpointPastedAsBase(transport);
    if (pasted !== undefined) return fail(io, 'base URL', pasted.problem, pasted.fix);
    const report = await checkModelList(transport, settings.env, io);
    if (typeof report === 'number') return report;
    describeDetectedDialect(transport, report, io);
    const targets = await checkMapping(transport, report, io);
    if (typeof targets === 'number') return targets;
    const windowFailure = checkContextWindow(transport, report, targets, io);
    if (windowFailure !== undefined) return windowFailure;
    const requested = typeof values['model'] === 'string' ? values['model'] : DEFAULT_CHECK_MODEL;
    const result = await withDetectedDialect(transport, report, settings, (checked) =>
      checkChat(checked, requested, io),
    );
    if (result === EXIT_OK) io.stdout('all checks passed\n');
    return result;
  } finally {
    await transport.close();
  }
}
