/**
 * Provider selection: a pure function of explicit options and an environment object, decided once.
 *
 * | credentials                                              | provider    |
 * |----------------------------------------------------------|-------------|
 * | `anthropicApiKey` / `ANTHROPIC_API_KEY` non-empty        | `anthropic` |
 * | else `tpxToken` / `TPX_OAUTH_TOKEN` non-empty, or `tpxTokenFile` / `TPX_OAUTH_TOKEN_FILE` set | `tpx` |
 * | else                                                     | `none`      |
 *
 * Explicit options win over the environment; empty strings count as absent. No network probing. The
 * reason names the option or variable that decided, never its value.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { TransportError, type ProviderName } from '../errors.js';
import type { TransportOptions } from './types.js';

/** The frozen outcome of selection, with everything a provider needs. Holds secrets: never log it. */
export interface ResolvedConfig {
  provider: ProviderName;
  reason: string;
  anthropic?: { apiKey: string; baseUrl: string };
  tpx?: { token: string; baseUrl: string; model: string | undefined; tokenSource: string };
}

const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

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
 * cannot work (a token without a base URL, an unreadable token file, a malformed URL).
 */
export function selectProvider(
  options: TransportOptions,
  env: Record<string, string | undefined>,
): ResolvedConfig {
  const key = pick(options.anthropicApiKey, 'anthropicApiKey', env, 'ANTHROPIC_API_KEY');
  if (key !== undefined) {
    const base = pick(options.anthropicBaseUrl, 'anthropicBaseUrl', env, 'ANTHROPIC_BASE_URL');
    return {
      provider: 'anthropic',
      reason: key.source,
      anthropic: {
        apiKey: key.value,
        baseUrl: checkUrl(base?.value ?? DEFAULT_ANTHROPIC_BASE_URL, 'ANTHROPIC_BASE_URL'),
      },
    };
  }

  let token = pick(options.tpxToken, 'tpxToken', env, 'TPX_OAUTH_TOKEN');
  if (token === undefined) {
    const file = pick(options.tpxTokenFile, 'tpxTokenFile', env, 'TPX_OAUTH_TOKEN_FILE');
    if (file !== undefined) {
      const variable = file.source.startsWith('the ') ? 'the tpxTokenFile option' : 'TPX_OAUTH_TOKEN_FILE';
      let content: string;
      try {
        content = readFileSync(file.value, 'utf8').trim();
      } catch (error) {
        const code = (error as { code?: string }).code ?? 'unreadable';
        throw new TransportError('MODEL_ECONFIG', `${variable} names a file that cannot be read (${code})`, {
          cause: error,
        });
      }
      if (content === '') throw new TransportError('MODEL_ECONFIG', `${variable} names an empty file`);
      token = {
        value: content,
        source: `${variable === 'TPX_OAUTH_TOKEN_FILE' ? 'TPX_OAUTH_TOKEN_FILE is set' : 'the tpxTokenFile option is set'}`,
      };
    }
  }
  if (token !== undefined) {
    const base = pick(options.tpxBaseUrl, 'tpxBaseUrl', env, 'TPX_BASE_URL');
    if (base === undefined) {
      throw new TransportError(
        'MODEL_ECONFIG',
        'an OAuth token is set but TPX_BASE_URL is not: set TPX_BASE_URL (or the tpxBaseUrl option) to the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1',
      );
    }
    const model = pick(options.tpxModel, 'tpxModel', env, 'TPX_MODEL');
    return {
      provider: 'tpx',
      reason: `${token.source} and ANTHROPIC_API_KEY is not`,
      tpx: {
        token: token.value,
        baseUrl: checkUrl(base.value, 'TPX_BASE_URL'),
        model: model?.value,
        tokenSource: token.source,
      },
    };
  }
  return {
    provider: 'none',
    reason: 'no credentials: neither ANTHROPIC_API_KEY nor TPX_OAUTH_TOKEN / TPX_OAUTH_TOKEN_FILE is set',
  };
}
