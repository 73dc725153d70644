/**
 * The reasoning-signature codec: a stateless, reversible mapping between a Responses API reasoning item's
 * reference (its id, its encrypted content, and where its visible text came from) and the `signature` of
 * the `thinking` block the caller sees.
 *
 * On the Responses wire the transport keeps no server-side state (`store: false`, no
 * `previous_response_id`), so an earlier turn's reasoning reaches the model again only if the caller sends
 * it back. Callers already do that for Anthropic: they return thinking blocks unchanged, signature
 * included, and treat the signature as opaque. The codec puts the reasoning item into that signature and
 * takes it out again when the next request arrives, at whichever replica it arrives.
 *
 * Format: `tpxr1.` + base64url(UTF-8 of the JSON array `[source, id, encryptedContent]`), where `source`
 * is `"s"` (summary parts) or `"c"` (reasoning-text parts), and a missing id or encrypted content is
 * `null`. Anthropic's own signatures are base64 and never contain `.`, so no signature Anthropic issued
 * decodes as one of ours: such blocks stay what they are (and are not sent on this wire).
 *
 * Decoding is strict: a string decodes only when encoding the result gives back the same string, so
 * `decode(encode(r)) = r` for every reference and `encode(decode(s)) = s` for every `s` that decodes.
 *
 * @module
 */

/** What a thinking block's signature carries about the reasoning item behind it. */
export interface ReasoningReference {
  /** The reasoning item's id (`rs_…`), when the server gave one. */
  id: string | undefined;
  /** The reasoning item's `encrypted_content`, when the server gave it. */
  encryptedContent: string | undefined;
  /** Whether the thinking text came from the item's `summary` parts or its `reasoning_text` content. */
  source: 'summary' | 'content';
}

const PREFIX = 'tpxr1.';
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * The signature for a reasoning item.
 *
 * @example
 * encodeReasoningSignature({ id: 'rs_1', encryptedContent: 'gAAA', source: 'summary' })
 * // → 'tpxr1.WyJzIiwicnNfMSIsImdBQUEiXQ'
 */
export function encodeReasoningSignature(reference: ReasoningReference): string {
  const json = JSON.stringify([
    reference.source === 'summary' ? 's' : 'c',
    reference.id ?? null,
    reference.encryptedContent ?? null,
  ]);
  return `${PREFIX}${Buffer.from(json, 'utf8').toString('base64url')}`;
}

/**
 * The reasoning item a signature stands for, or `undefined` for a signature this codec did not make
 * (an Anthropic signature, an empty one, one the caller altered).
 */
export function decodeReasoningSignature(signature: string): ReasoningReference | undefined {
  if (!signature.startsWith(PREFIX)) return undefined;
  const payload = signature.slice(PREFIX.length);
  if (!BASE64URL.test(payload)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 3) return undefined;
  const [source, id, encryptedContent] = value as unknown[];
  if (source !== 's' && source !== 'c') return undefined;
  if (
    !(id === null || typeof id === 'string') ||
    !(encryptedContent === null || typeof encryptedContent === 'string')
  ) {
    return undefined;
  }
  const reference: ReasoningReference = {
    id: id ?? undefined,
    encryptedContent: encryptedContent ?? undefined,
    source: source === 's' ? 'summary' : 'content',
  };
  // Strict: only the exact bytes this codec produces decode (no alternative JSON spellings, no padding).
  return encodeReasoningSignature(reference) === signature ? reference : undefined;
}
