/**
 * The settings `tpx serve`, `tpx claude` and `tpx doctor` share: each flag equals an environment
 * variable (the flag wins), checked here so that messages name the flag or variable the user wrote,
 * never a library option.
 *
 * | flag                    | variable                 | meaning |
 * |-------------------------|--------------------------|---------|
 * | `--base-url`            | `TPX_BASE_URL`           | the OpenAI-compatible base URL |
 * | `--token`               | `TPX_OAUTH_TOKEN`        | the upstream bearer token (a local server without auth accepts any) |
 * | `--dialect`             | `TPX_DIALECT`            | the server profile |
 * | `--wire`                | `TPX_WIRE`               | `chat` (Chat Completions) or `responses` (the Responses API) |
 * | `--model-map`           | `TPX_MODEL_MAP`          | `pattern=model` rules |
 * | `--max-tokens`          | `TPX_MAX_TOKENS`         | cap on `max_tokens` |
 * | `--drop-beta`           | `TPX_DROP_BETAS`         | betas left out of `anthropic-beta` on the native path |
 * | `--text-tool-calls`     | `TPX_TEXT_TOOL_CALLS`    | `on`/`off`: read tool calls a model wrote as text |
 * | `--timeout`             | `TPX_TIMEOUT`            | whole exchange (seconds, or `500ms`, `2m`) |
 * | `--first-byte-timeout`  | `TPX_FIRST_BYTE_TIMEOUT` | until the response headers |
 * | `--idle-timeout`        | `TPX_IDLE_TIMEOUT`       | longest silence inside a response |
 * | `--max-retries`         | `TPX_MAX_RETRIES`        | retries before anything reached the client |
 * | `--log-level`           | `TPX_LOG_LEVEL`          | `debug`, `info`, `warn`, `error`, `silent` |
 * | `--config`              | `TPX_CONFIG`             | a routes file: several upstreams and the routes between them (docs/routes.md) |
 *
 * @module
 */
import { TransportError, isTransportError } from '../errors.js';
import { HOP_HEADER } from '../server/loop-guard.js';
import { createTransport } from '../transport/create-transport.js';
import { parseModelMap } from '../transport/model-map.js';
import type { ModelTransport, TransportOptions } from '../transport/types.js';
import { readConfigFile } from './config-file.js';
import { UsageError } from './output.js';

/** The `parseArgs` spec of the shared flags. */
export const PROXY_FLAGS = {
  'base-url': { type: 'string' },
  token: { type: 'string' },
  dialect: { type: 'string' },
  wire: { type: 'string' },
  'model-map': { type: 'string' },
  'max-tokens': { type: 'string' },
  'drop-beta': { type: 'string' },
  'text-tool-calls': { type: 'string' },
  timeout: { type: 'string' },
  'first-byte-timeout': { type: 'string' },
  'idle-timeout': { type: 'string' },
  'max-retries': { type: 'string' },
  'log-level': { type: 'string' },
  config: { type: 'string' },
} as const;

/** The flags that stand for an environment variable of the transport, verbatim. */
const FLAG_VARIABLES: Readonly<Record<string, string>> = {
  'base-url': 'TPX_BASE_URL',
  token: 'TPX_OAUTH_TOKEN',
  dialect: 'TPX_DIALECT',
  wire: 'TPX_WIRE',
  'model-map': 'TPX_MODEL_MAP',
  'max-tokens': 'TPX_MAX_TOKENS',
  'drop-beta': 'TPX_DROP_BETAS',
  'text-tool-calls': 'TPX_TEXT_TOOL_CALLS',
  config: 'TPX_CONFIG',
};

/**
 * The library options a configuration error may name, as a user of the CLI sets them: the flag where
 * there is one, else the variable. Options the CLI never passes are here too, since a message naming
 * one would still be in the library's words.
 */
const OPTION_SETTINGS: Readonly<Record<string, string>> = {
  tpxBaseUrl: '--base-url',
  tpxToken: '--token',
  tpxDialect: '--dialect',
  tpxWire: '--wire',
  modelMap: '--model-map',
  maxOutputTokens: '--max-tokens',
  dropBetas: '--drop-beta',
  tpxTextToolCalls: '--text-tool-calls',
  timeoutMs: '--timeout',
  firstByteTimeoutMs: '--first-byte-timeout',
  idleTimeoutMs: '--idle-timeout',
  maxRetries: '--max-retries',
  tpxTokenFile: 'TPX_OAUTH_TOKEN_FILE',
  tpxTokenCommand: 'TPX_OAUTH_TOKEN_COMMAND',
  tpxModel: 'TPX_MODEL',
  tpxAzureApiVersion: 'TPX_AZURE_API_VERSION',
  anthropicApiKey: 'ANTHROPIC_API_KEY',
  anthropicBaseUrl: 'ANTHROPIC_BASE_URL',
};

/**
 * A configuration error of the library, told in the CLI's words: each variable whose value came from a
 * flag is named by that flag (`--base-url is not a valid URL`, since the user wrote `--base-url`), and
 * each library option by its flag or variable (`set TPX_BASE_URL (or --base-url)`). The library names
 * its options for library users; a CLI user cannot pass them, so reading one would send them looking
 * for a setting that does not exist. Any other error is returned as it is.
 */
export function inCliTerms(error: unknown, flagsGiven: ProxySettings['flagsGiven']): unknown {
  if (!isTransportError(error) || error.code !== 'MODEL_ECONFIG') return error;
  let message = error.message.replace(/\bthe (\w+) option\b/g, (whole, option: string) => {
    return OPTION_SETTINGS[option] ?? whole;
  });
  for (const [flag, variable] of flagsGiven) {
    message = message.replace(new RegExp(`\\b${variable}\\b`, 'g'), flag);
  }
  if (message === error.message) return error;
  // No `cause`: it would carry the library's wording to whatever prints the whole error.
  return new TransportError('MODEL_ECONFIG', message, { status: error.status });
}

/** `createTransport` with its configuration errors in the CLI's words ({@link inCliTerms}). */
export function createCliTransport(options: TransportOptions, settings: ProxySettings): ModelTransport {
  try {
    return createTransport(options);
  } catch (error) {
    throw inCliTerms(error, settings.flagsGiven);
  }
}

const DURATIONS = [
  ['timeout', 'TPX_TIMEOUT', 'timeoutMs'],
  ['first-byte-timeout', 'TPX_FIRST_BYTE_TIMEOUT', 'firstByteTimeoutMs'],
  ['idle-timeout', 'TPX_IDLE_TIMEOUT', 'idleTimeoutMs'],
] as const;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What the shared flags and variables resolve to. */
export interface ProxySettings {
  /** The environment the transport reads: the process's, with each given flag in its variable. */
  env: Record<string, string | undefined>;
  /** Deadlines and retries, already checked. */
  transportOptions: TransportOptions;
  logLevel: LogLevel | undefined;
  /** The flags given that stand for a variable, each with its variable, so reports can name both. */
  flagsGiven: readonly (readonly [flag: string, variable: string])[];
}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

function stringValue(values: Values, flag: string): string | undefined {
  const value = values[flag];
  return typeof value === 'string' ? value : undefined;
}

/**
 * A duration: a number of seconds (`600`, `1.5`), or with a unit: `500ms`, `30s`, `10m`; `0` turns the
 * deadline off. Returns milliseconds.
 */
export function parseDuration(text: string, name: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (match === null) {
    throw new UsageError(
      `${name} must be a duration such as 600 (seconds), 30s, 500ms or 10m, got ${JSON.stringify(text)}`,
    );
  }
  const amount = Number(match[1]);
  const unitMs = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[match[2] ?? 's'] ?? 1_000;
  return Math.round(amount * unitMs);
}

function parseCount(text: string, name: string, minimum: number): number {
  const value = Number(text.trim());
  if (text.trim() === '' || !Number.isInteger(value) || value < minimum) {
    throw new UsageError(
      `${name} must be a whole number of at least ${minimum}, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/** Reads the shared flags over the environment. Throws `UsageError` naming the flag or variable. */
export function readProxySettings(
  values: Values,
  processEnv: Record<string, string | undefined>,
): ProxySettings {
  const env = { ...processEnv };
  const flagsGiven: (readonly [string, string])[] = [];
  for (const [flag, variable] of Object.entries(FLAG_VARIABLES)) {
    const value = stringValue(values, flag);
    if (value === undefined) continue;
    env[variable] = value;
    flagsGiven.push([`--${flag}`, variable]);
  }
  // A token on the command line is the caller's statement of the credentials: an ANTHROPIC_API_KEY (or
  // another token source) left in the shell must not win over it, as explicit options win in the library.
  if (stringValue(values, 'token') !== undefined) {
    for (const variable of ['ANTHROPIC_API_KEY', 'TPX_OAUTH_TOKEN_FILE', 'TPX_OAUTH_TOKEN_COMMAND']) {
      delete env[variable];
    }
  }
  const wireFlag = stringValue(values, 'wire');
  if (wireFlag !== undefined && wireFlag !== 'chat' && wireFlag !== 'responses') {
    throw new UsageError(`--wire must be "chat" or "responses", got ${JSON.stringify(wireFlag)}`);
  }
  const mapFlag = stringValue(values, 'model-map');
  try {
    parseModelMap(env['TPX_MODEL_MAP'] ?? '', mapFlag === undefined ? 'TPX_MODEL_MAP' : '--model-map');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const maxTokens = env['TPX_MAX_TOKENS'];
  if (maxTokens !== undefined && maxTokens.trim() !== '') {
    parseCount(
      maxTokens,
      stringValue(values, 'max-tokens') === undefined ? 'TPX_MAX_TOKENS' : '--max-tokens',
      1,
    );
  }
  const transportOptions: TransportOptions = {};
  for (const [flag, variable, option] of DURATIONS) {
    const fromFlag = stringValue(values, flag);
    const text = fromFlag ?? env[variable];
    if (text === undefined || text.trim() === '') continue;
    transportOptions[option] = parseDuration(text, fromFlag === undefined ? variable : `--${flag}`);
  }
  const retriesFlag = stringValue(values, 'max-retries');
  const retries = retriesFlag ?? env['TPX_MAX_RETRIES'];
  if (retries !== undefined && retries.trim() !== '') {
    transportOptions.maxRetries = parseCount(
      retries,
      retriesFlag === undefined ? 'TPX_MAX_RETRIES' : '--max-retries',
      0,
    );
  }
  const configPath = env['TPX_CONFIG'];
  if (configPath !== undefined && configPath.trim() !== '') {
    const origin = stringValue(values, 'config') === undefined ? 'TPX_CONFIG' : '--config';
    const file = readConfigFile(configPath.trim(), origin);
    transportOptions.routes = file.routes as NonNullable<TransportOptions['routes']>;
    transportOptions.routesSource = file.source;
  }
  const levelFlag = stringValue(values, 'log-level');
  const levelText = (levelFlag ?? env['TPX_LOG_LEVEL'])?.trim().toLowerCase();
  let logLevel: LogLevel | undefined;
  if (levelText !== undefined && levelText !== '') {
    if (!(LOG_LEVELS as readonly string[]).includes(levelText)) {
      throw new UsageError(
        `${levelFlag === undefined ? 'TPX_LOG_LEVEL' : '--log-level'} must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(levelText)}`,
      );
    }
    logLevel = levelText as LogLevel;
  }
  return { env, transportOptions, logLevel, flagsGiven };
}

/** The transport options of a proxy: the settings, the upstream inspection, and the hop header. */
export function proxyTransportOptions(settings: ProxySettings, instanceId: string): TransportOptions {
  return {
    ...settings.transportOptions,
    env: settings.env,
    inspectUpstream: true,
    upstreamHeaders: { [HOP_HEADER]: instanceId },
  };
}
