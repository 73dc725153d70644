/**
 * Provider selection: a pure function of explicit options and an environment object, decided once.
 *
 * | credentials                                              | provider    |
 * |----------------------------------------------------------|-------------|
 * | `anthropicApiKey` / `ANTHROPIC_API_KEY` non-empty        | `anthropic` |
 * | else `tpxToken` / `TPX_OAUTH_TOKEN` non-empty, or `tpxTokenFile` / `TPX_OAUTH_TOKEN_FILE` set, or `tpxTokenCommand` / `TPX_OAUTH_TOKEN_COMMAND` set | `tpx` |
 * | else                                                     | `none`      |
 *
 * Explicit options win over the environment; empty strings count as absent. For the credentials that
 * holds across providers: when any credential option is passed (`anthropicApiKey`, `tpxToken`,
 * `tpxTokenFile`, `tpxTokenCommand`), the credentials are those options alone, and the environment's
 * credential variables are not read — an `ANTHROPIC_API_KEY` in the environment does not turn a caller's
 * explicit tpx configuration into an anthropic one. The table above then applies to the options (the
 * formal model's `Select(hasKey, hasToken)`, with the caller's statement as the credentials present).
 * No network probing. The reason names the option or variable that decided, never its value. Among the
 * token sources the static token wins over the file, and the file over the command.
 *
 * For `tpx` it also settles the dialect (`tpxDialect` / `TPX_DIALECT`, else detected from the base URL's
 * host, else `openai-generic`) and Azure's `api-version`. It does no I/O: a token file is read, and a
 * token command run, by `createTokenSource` when the transport is created.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import {
  DEFAULT_AZURE_API_VERSION,
  DIALECTS,
  detectDialect,
  parseDialectName,
  type DialectName,
} from '../translate/dialects.js';
import { DEFAULT_TOKEN_COMMAND_TIMEOUT_MS, type TokenSpec } from '../providers/token-source.js';
import type { TransportOptions } from './types.js';

/**
 * The frozen outcome of selection, with everything the chosen provider needs and nothing for the others:
 * `provider` tells which members are there. Holds secrets: never log it.
 */
export type ResolvedConfig =
  | { provider: 'anthropic'; reason: string; anthropic: AnthropicSelection }
  | { provider: 'tpx'; reason: string; tpx: TpxSelection }
  | { provider: 'none'; reason: string };

/** What the `anthropic` provider needs from selection. */
export interface AnthropicSelection {
  apiKey: string;
  baseUrl: string;
  /** `TPX_DROP_BETAS`: present only when it names any. */
  dropBetas?: readonly string[];
}

/** What the `tpx` provider needs from selection. `tokenSpec` holds the token read at start-up. */
export interface TpxSelection {
  tokenSpec: TokenSpec;
  baseUrl: string;
  model: string | undefined;
  /** The sentence naming the token's source, e.g. `TPX_OAUTH_TOKEN_FILE is set`. */
  tokenSource: string;
  dialect: DialectName;
  /** Why this dialect, e.g. `TPX_DIALECT is set` or `detected from the base URL host api.mistral.ai`. */
  dialectReason: string;
  azureApiVersion: string;
  /** The wire protocol, and why (`TPX_WIRE is set`, or the dialect's default). */
  wire: 'chat' | 'responses';
  wireReason: string;
  /** Whether tool calls written as text are read as calls (`TPX_TEXT_TOOL_CALLS`, else the dialect's default). */
  textToolCalls: boolean;
}

const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** The environment variables that hold credentials, set aside when credentials are passed as options. */
const CREDENTIAL_VARIABLES = [
  'ANTHROPIC_API_KEY',
  'TPX_OAUTH_TOKEN',
  'TPX_OAUTH_TOKEN_FILE',
  'TPX_OAUTH_TOKEN_COMMAND',
] as const;

/** Whether the caller passed any credential as an option. */
function hasCredentialOption(options: TransportOptions): boolean {
  return (
    present(options.anthropicApiKey) ||
    present(options.tpxToken) ||
    present(options.tpxTokenFile) ||
    present(options.tpxTokenCommand)
  );
}

/** `env` without its credential variables. */
function withoutCredentials(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const rest = { ...env };
  for (const name of CREDENTIAL_VARIABLES) delete rest[name];
  return rest;
}

function present(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

/** Picks the option if given, else the variable; reports which one it was. */
function pick(
  option: string | undefined,
  optionName: string,
  env: Record<string, string | undefined>,
  variable: string,
): { value: string; source: string } | undefined {
  if (present(option)) return { value: option.trim(), source: `the ${optionName} option is set` };
  const fromEnv = env[variable];
  if (present(fromEnv)) return { value: fromEnv.trim(), source: `${variable} is set` };
  return undefined;
}

function checkUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TransportError(
      'MODEL_ECONFIG',
      `${name} is not a valid URL; expected e.g. http://127.0.0.1:8000/v1`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TransportError('MODEL_ECONFIG', `${name} must be an http:// or https:// URL`);
  }
  return value.replace(/\/+$/, '');
}

/**
 * Decides the provider from the credentials present. Throws `MODEL_ECONFIG` for a configuration that
 * cannot work (a token without a base URL, a malformed URL).
 */
export function selectProvider(
  options: TransportOptions,
  env: Record<string, string | undefined>,
): ResolvedConfig {
  const explicit = hasCredentialOption(options);
  const credentials = explicit ? withoutCredentials(env) : env;
  const key = pick(options.anthropicApiKey, 'anthropicApiKey', credentials, 'ANTHROPIC_API_KEY');
  if (key !== undefined) {
    const base = pick(options.anthropicBaseUrl, 'anthropicBaseUrl', env, 'ANTHROPIC_BASE_URL');
    return {
      provider: 'anthropic',
      reason: key.source,
      anthropic: {
        apiKey: key.value,
        baseUrl:
          base === undefined
            ? DEFAULT_ANTHROPIC_BASE_URL
            : checkUrl(base.value, sourceName(base.source, 'anthropicBaseUrl', 'ANTHROPIC_BASE_URL')),
        ...droppedBetas(options, env),
      },
    };
  }

  const token = pickToken(options, credentials);
  if (token !== undefined) {
    const base = pick(options.tpxBaseUrl, 'tpxBaseUrl', env, 'TPX_BASE_URL');
    if (base === undefined) {
      throw new TransportError(
        'MODEL_ECONFIG',
        'an OAuth token is set but TPX_BASE_URL is not: set TPX_BASE_URL (or the tpxBaseUrl option) to the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1',
      );
    }
    const baseUrl = checkUrl(base.value, sourceName(base.source, 'tpxBaseUrl', 'TPX_BASE_URL'));
    const model = pick(options.tpxModel, 'tpxModel', env, 'TPX_MODEL');
    const dialect = pickDialect(options, env, baseUrl);
    const apiVersion = pick(options.tpxAzureApiVersion, 'tpxAzureApiVersion', env, 'TPX_AZURE_API_VERSION');
    if (apiVersion !== undefined && !/^[A-Za-z0-9._-]+$/.test(apiVersion.value)) {
      throw new TransportError(
        'MODEL_ECONFIG',
        `${sourceName(apiVersion.source, 'tpxAzureApiVersion', 'TPX_AZURE_API_VERSION')} must look like ` +
          `2024-10-21 or 2025-04-01-preview, got ${JSON.stringify(apiVersion.value)}`,
      );
    }
    const wire = pickWire(options, env, dialect.name);
    return {
      provider: 'tpx',
      reason:
        explicit && present(env['ANTHROPIC_API_KEY'])
          ? `${token.source}, and credential options are used before ANTHROPIC_API_KEY in the environment`
          : `${token.source} and ANTHROPIC_API_KEY is not`,
      tpx: {
        tokenSpec: token.spec,
        baseUrl,
        model: model?.value,
        tokenSource: token.source,
        dialect: dialect.name,
        dialectReason: dialect.reason,
        azureApiVersion: apiVersion?.value ?? DEFAULT_AZURE_API_VERSION,
        wire: wire.name,
        wireReason: wire.reason,
        textToolCalls: pickTextToolCalls(options, env, dialect.name),
      },
    };
  }
  return {
    provider: 'none',
    reason:
      'no credentials: neither ANTHROPIC_API_KEY nor TPX_OAUTH_TOKEN / TPX_OAUTH_TOKEN_FILE / TPX_OAUTH_TOKEN_COMMAND is set',
  };
}

/** The name of an option or variable as messages show it, from `pick`'s source sentence. */
function sourceName(source: string, optionName: string, variable: string): string {
  return source.startsWith('the ') ? `the ${optionName} option` : variable;
}

/**
 * The token source: a static token, else a token file, else a token command (the file read and the
 * command run by `createTokenSource`).
 */
function pickToken(
  options: TransportOptions,
  env: Record<string, string | undefined>,
): { spec: TokenSpec; source: string } | undefined {
  const token = pick(options.tpxToken, 'tpxToken', env, 'TPX_OAUTH_TOKEN');
  if (token !== undefined) {
    const origin = sourceName(token.source, 'tpxToken', 'TPX_OAUTH_TOKEN');
    return { spec: { kind: 'static', origin, token: token.value }, source: token.source };
  }
  const file = pick(options.tpxTokenFile, 'tpxTokenFile', env, 'TPX_OAUTH_TOKEN_FILE');
  if (file !== undefined) {
    const origin = sourceName(file.source, 'tpxTokenFile', 'TPX_OAUTH_TOKEN_FILE');
    return {
      spec: { kind: 'file', origin, path: file.value },
      source: file.source,
    };
  }
  const command = pick(options.tpxTokenCommand, 'tpxTokenCommand', env, 'TPX_OAUTH_TOKEN_COMMAND');
  if (command !== undefined) {
    const origin = sourceName(command.source, 'tpxTokenCommand', 'TPX_OAUTH_TOKEN_COMMAND');
    return {
      spec: { kind: 'command', origin, command: command.value, timeoutMs: commandTimeout(options, env) },
      source: command.source,
    };
  }
  return undefined;
}

function commandTimeout(options: TransportOptions, env: Record<string, string | undefined>): number {
  if (options.tpxTokenCommandTimeoutMs !== undefined) {
    return checkTimeout(options.tpxTokenCommandTimeoutMs, 'tpxTokenCommandTimeoutMs');
  }
  const fromEnv = env['TPX_OAUTH_TOKEN_COMMAND_TIMEOUT_MS'];
  if (present(fromEnv)) return checkTimeout(Number(fromEnv.trim()), 'TPX_OAUTH_TOKEN_COMMAND_TIMEOUT_MS');
  return DEFAULT_TOKEN_COMMAND_TIMEOUT_MS;
}

function checkTimeout(value: number, name: string): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new TransportError('MODEL_ECONFIG', `${name} must be a whole number of milliseconds above 0`);
  }
  return value;
}

/** The dialect: named by the option or `TPX_DIALECT`, else detected from the host, else generic. */
function pickDialect(
  options: TransportOptions,
  env: Record<string, string | undefined>,
  baseUrl: string,
): { name: DialectName; reason: string } {
  const named = pick(options.tpxDialect, 'tpxDialect', env, 'TPX_DIALECT');
  if (named !== undefined) {
    const name = parseDialectName(named.value, sourceName(named.source, 'tpxDialect', 'TPX_DIALECT'));
    return { name, reason: named.source };
  }
  const detected = detectDialect(baseUrl);
  if (detected !== undefined) {
    return { name: detected, reason: `detected from the TPX_BASE_URL host ${new URL(baseUrl).hostname}` };
  }
  return {
    name: 'openai-generic',
    reason:
      `the TPX_BASE_URL host ${new URL(baseUrl).hostname} is not a known service, so the profile for ` +
      `${DIALECTS['openai-generic'].label} applies; set TPX_DIALECT to choose another`,
  };
}

/**
 * The wire protocol: `tpxWire` / `TPX_WIRE` (`chat` or `responses`), else the dialect's default. Vertex AI
 * serves no Responses API, so `responses` with the `vertex` dialect is a configuration error.
 */
function pickWire(
  options: TransportOptions,
  env: Record<string, string | undefined>,
  dialect: DialectName,
): { name: 'chat' | 'responses'; reason: string } {
  const named = pick(options.tpxWire, 'tpxWire', env, 'TPX_WIRE');
  if (named === undefined) {
    return { name: DIALECTS[dialect].defaultWire, reason: `the default of the ${dialect} dialect` };
  }
  const variable = sourceName(named.source, 'tpxWire', 'TPX_WIRE');
  const value = named.value.toLowerCase();
  if (value !== 'chat' && value !== 'responses') {
    throw new TransportError(
      'MODEL_ECONFIG',
      `${variable} must be "chat" (Chat Completions) or "responses" (the OpenAI Responses API), got ${JSON.stringify(named.value)}`,
    );
  }
  if (value === 'responses' && DIALECTS[dialect].endpoint === 'vertex-openapi') {
    throw new TransportError(
      'MODEL_ECONFIG',
      `${variable} is "responses", but Vertex AI serves no Responses API; use the chat wire with the vertex dialect`,
    );
  }
  return { name: value, reason: named.source };
}

/** Whether text-written tool calls are read: `tpxTextToolCalls` / `TPX_TEXT_TOOL_CALLS`, else the dialect's default. */
function pickTextToolCalls(
  options: TransportOptions,
  env: Record<string, string | undefined>,
  dialect: DialectName,
): boolean {
  if (options.tpxTextToolCalls !== undefined) return options.tpxTextToolCalls;
  const value = env['TPX_TEXT_TOOL_CALLS'];
  if (!present(value)) return DIALECTS[dialect].readsTextToolCalls;
  const word = value.trim().toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(word)) return true;
  if (['off', 'false', '0', 'no'].includes(word)) return false;
  throw new TransportError(
    'MODEL_ECONFIG',
    `TPX_TEXT_TOOL_CALLS must be "on" or "off", got ${JSON.stringify(value)}`,
  );
}

/** The betas to drop on the native path: the `dropBetas` option, else `TPX_DROP_BETAS` (comma-separated). */
function droppedBetas(
  options: TransportOptions,
  env: Record<string, string | undefined>,
): { dropBetas?: readonly string[] } {
  const names =
    options.dropBetas ??
    (env['TPX_DROP_BETAS'] ?? '')
      .split(',')
      .map((beta) => beta.trim())
      .filter((beta) => beta !== '');
  return names.length === 0 ? {} : { dropBetas: [...names] };
}
