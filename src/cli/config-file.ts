/**
 * Reads the routes file of `--config FILE` / `TPX_CONFIG` (docs/routes.md): JSON, checked by the
 * transport when it is created. Token file paths in it may start with `~/` (the home directory) or be
 * relative to the file's own directory.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { TransportError } from '../errors.js';

/** A routes file, read: its parsed content, and how messages name it. */
export interface ConfigFile {
  readonly routes: unknown;
  readonly source: string;
}

/** `path` as the file's directory and the home directory resolve it. */
function resolvePath(path: string, directory: string): string {
  if (path === '~' || path.startsWith('~/')) return resolve(homedir(), path.slice(2));
  return isAbsolute(path) ? path : resolve(directory, path);
}

/** The parsed value with each upstream's `tokenFile` made absolute (the rest is left to the checks). */
function withTokenPaths(value: unknown, directory: string): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const upstreams = (value as { upstreams?: unknown }).upstreams;
  if (typeof upstreams !== 'object' || upstreams === null) return value;
  const resolved: Record<string, unknown> = {};
  for (const [name, upstream] of Object.entries(upstreams)) {
    const tokenFile = (upstream as { tokenFile?: unknown } | null)?.tokenFile;
    resolved[name] =
      typeof tokenFile === 'string' && tokenFile !== ''
        ? { ...(upstream as object), tokenFile: resolvePath(tokenFile, directory) }
        : upstream;
  }
  return { ...value, upstreams: resolved };
}

/**
 * Reads and parses the routes file.
 *
 * @param origin how the path was given (`--config`, `TPX_CONFIG`), for messages
 * @throws TransportError `MODEL_ECONFIG` when it cannot be read or is not JSON
 */
export function readConfigFile(path: string, origin: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code ?? String(error);
    throw new TransportError('MODEL_ECONFIG', `${origin} names ${path}, which cannot be read (${code})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TransportError('MODEL_ECONFIG', `${path} is not valid JSON: ${(error as Error).message}`);
  }
  return { routes: withTokenPaths(value, dirname(resolve(path))), source: path };
}
