/**
 * The tool-name codec: a per-request, reversible mapping between Messages tool names (up to 128
 * characters) and Chat Completions function names (`^[a-zA-Z0-9_-]{1,64}$`).
 *
 * It keeps no state between requests: every Messages request carries its `tools`, so the reverse map
 * is rebuilt from them each time, and any replica of the proxy can translate any request.
 *
 * | Messages name                                   | upstream function name                         |
 * |-------------------------------------------------|------------------------------------------------|
 * | matches `^[a-zA-Z0-9_-]{1,64}$`                 | the name itself                                |
 * | anything else (longer, or other characters)     | `<first 40 safe chars>_h<16 hex of sha256(name)>` |
 *
 * "Safe chars" are the characters of the name that match `[a-zA-Z0-9_-]`, in order; the others are
 * left out. The encoded form is at most 58 characters, so it is always a valid function name. The hash
 * makes it deterministic: the same name encodes the same way in every request, including names of
 * tools that appear only in the history.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { TransportError } from '../errors.js';

const VALID_UPSTREAM_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const UNSAFE_CHARACTERS = /[^a-zA-Z0-9_-]/g;
const PREFIX_LENGTH = 40;
const HASH_HEX_LENGTH = 16;

/** Both directions of the name mapping for one request. */
export interface ToolNameMap {
  /** The function name to send upstream for a Messages tool name. Total and deterministic. */
  toUpstream(name: string): string;
  /**
   * The Messages tool name for a function name the provider used. A name that no tool of the request
   * maps to is returned unchanged (the model called a tool it was not offered; the caller sees it as is).
   */
  fromUpstream(name: string): string;
}

/**
 * The upstream function name for one Messages tool name (the table in the module comment).
 *
 * @example
 * encodeToolName('get_weather')      // → 'get_weather'
 * encodeToolName('a'.repeat(100))    // → 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_h' + 16 hex characters
 */
export function encodeToolName(name: string): string {
  if (VALID_UPSTREAM_NAME.test(name)) return name;
  const safePrefix = name.replace(UNSAFE_CHARACTERS, '').slice(0, PREFIX_LENGTH);
  const hash = createHash('sha256').update(name, 'utf8').digest('hex').slice(0, HASH_HEX_LENGTH);
  return `${safePrefix}_h${hash}`;
}

/**
 * Builds the name map for one request from its `tools`.
 *
 * @throws TransportError `MODEL_EINVAL` when two tools have the same name, or when two different names
 *   would reach the provider as the same function name (for example a tool literally named like the
 *   encoded form of another tool's long name): the provider could not tell them apart.
 */
export function createToolNameMap(tools: readonly { name: string }[] | undefined): ToolNameMap {
  const upstreamByName = new Map<string, string>();
  const nameByUpstream = new Map<string, { name: string; index: number }>();
  (tools ?? []).forEach((tool, index) => {
    const upstream = encodeToolName(tool.name);
    const existing = nameByUpstream.get(upstream);
    if (existing !== undefined) {
      const message =
        existing.name === tool.name
          ? `tools[${existing.index}] and tools[${index}] are both named ${JSON.stringify(tool.name)}; tool names must be unique`
          : `tools[${existing.index}] (${JSON.stringify(existing.name)}) and tools[${index}] (${JSON.stringify(tool.name)}) ` +
            `would both be sent to the provider as the function name ${JSON.stringify(upstream)}; rename one of them`;
      throw new TransportError('MODEL_EINVAL', message);
    }
    nameByUpstream.set(upstream, { name: tool.name, index });
    upstreamByName.set(tool.name, upstream);
  });
  return {
    toUpstream: (name) => upstreamByName.get(name) ?? encodeToolName(name),
    fromUpstream: (name) => nameByUpstream.get(name)?.name ?? name,
  };
}
