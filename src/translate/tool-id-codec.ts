/**
 * The tool-id codec: a stateless, reversible mapping between the tool-call ids an OpenAI-compatible
 * provider emits and the `tool_use` ids a Messages caller sees (`^[A-Za-z0-9_-]+$`).
 *
 * Because it keeps no state, the proxy needs no memory of a conversation, and any replica can translate
 * the next request: the caller's `tool_result.tool_use_id` alone says which provider id to send back.
 *
 * Encoding, for a provider id `p` at its `n`-th occurrence within one response (n = 1, 2, …):
 *
 * | `p`                                                        | Messages id                    |
 * |------------------------------------------------------------|--------------------------------|
 * | valid (`[A-Za-z0-9_-]+`, ≤ 200 chars), not `tpx_`-prefixed, n = 1 | `p` itself               |
 * | anything else, n = 1 (bad characters, too long, `tpx_…`)     | `tpx_` + payload(`p`)          |
 * | any `p`, n ≥ 2 (the provider repeated an id)               | `tpx_d<n>` + payload(`p`)      |
 * | missing or empty                                           | `tpx_g` + a fresh random id    |
 *
 * where payload(`p`) is `e` + base64url(UTF-8 of `p`), or, for a string with lone surrogates that
 * UTF-8 cannot carry, `u` + base64url(UTF-16LE of `p`).
 *
 * Decoding inverts the table: ids outside the reserved `tpx_` namespace are returned unchanged; `tpx_e…`,
 * `tpx_u…` and `tpx_d<n>…` decode to the provider's exact original string; a generated `tpx_g…` id
 * decodes to itself (the provider gave none, so the generated one is what we show it on the next turn).
 *
 * Why no two distinct inputs collide: the rows have disjoint images (unprefixed / `tpx_e`,`tpx_u` /
 * `tpx_d` / `tpx_g`), the row that passes ids unchanged excludes the reserved prefix, each payload
 * encoding is injective and tagged, and the occurrence number separates repeats of one id.
 *
 * @module
 */

const RESERVED_PREFIX = 'tpx_';
const VALID_ID = /^[A-Za-z0-9_-]+$/;
/** Longest provider id passed through unchanged; longer ones are encoded (still reversibly). */
export const MAX_PLAIN_ID_LENGTH = 200;

/** True for a string usable as a Messages `tool_use.id`. */
export function isValidMessagesToolId(id: string): boolean {
  return VALID_ID.test(id);
}

/**
 * Encodes one provider tool-call id for the caller.
 *
 * @param providerId the id as the provider sent it (`undefined`, `null` and `""` mean "none given")
 * @param occurrence 1 for the first time this id appears in the response, 2 for the second, …
 * @param generateId source of fresh ids for calls that came without one (must return `[A-Za-z0-9_-]+`)
 *
 * @example
 * encodeToolId('call_abc', 1, gen)          // → 'call_abc'
 * encodeToolId('functions.read:0', 1, gen)  // → 'tpx_eZnVuY3Rpb25zLnJlYWQ6MA'
 * encodeToolId('call_abc', 2, gen)          // → 'tpx_d2eY2FsbF9hYmM'
 */
export function encodeToolId(
  providerId: string | null | undefined,
  occurrence: number,
  generateId: () => string,
): string {
  if (providerId === undefined || providerId === null || providerId === '') {
    return `${RESERVED_PREFIX}g${generateId()}`;
  }
  if (occurrence > 1) {
    return `${RESERVED_PREFIX}d${occurrence}${toPayload(providerId)}`;
  }
  if (isPlainId(providerId)) return providerId;
  return `${RESERVED_PREFIX}${toPayload(providerId)}`;
}

/** True for a provider id that, at its first occurrence, is passed through unchanged. */
function isPlainId(providerId: string): boolean {
  return (
    providerId.length <= MAX_PLAIN_ID_LENGTH &&
    !providerId.startsWith(RESERVED_PREFIX) &&
    VALID_ID.test(providerId)
  );
}

/**
 * Decodes a caller's tool id back to the id the provider emitted. Total: an id this codec did not
 * produce (a caller's own history, say) is returned unchanged.
 *
 * @example
 * decodeToolId('tpx_eZnVuY3Rpb25zLnJlYWQ6MA') // → 'functions.read:0'
 */
export function decodeToolId(messagesId: string): string {
  if (!messagesId.startsWith(RESERVED_PREFIX)) return messagesId;
  const rest = messagesId.slice(RESERVED_PREFIX.length);
  if (rest.startsWith('d')) {
    const digits = /^d([2-9]|[1-9]\d+)(?=[eu])/.exec(rest);
    if (digits === null) return messagesId;
    return fromPayload(rest.slice(digits[0].length)) ?? messagesId;
  }
  const decoded = fromPayload(rest);
  // A first occurrence of an id that passes through unchanged is never encoded, so `tpx_e` + its
  // payload is not this codec's output: decoding it would give two caller ids one provider id.
  if (decoded === undefined || isPlainId(decoded)) return messagesId;
  return decoded;
}

/**
 * Assigns Messages ids to all tool calls of one response, in order, so that repeated provider ids get
 * distinct caller ids. Returns one id per input.
 */
export function encodeToolIds(
  providerIds: readonly (string | null | undefined)[],
  generateId: () => string,
): string[] {
  const seen = new Map<string, number>();
  return providerIds.map((providerId) => {
    if (providerId === undefined || providerId === null || providerId === '') {
      return encodeToolId(providerId, 1, generateId);
    }
    const occurrence = (seen.get(providerId) ?? 0) + 1;
    seen.set(providerId, occurrence);
    return encodeToolId(providerId, occurrence, generateId);
  });
}

function toPayload(text: string): string {
  const utf8 = Buffer.from(text, 'utf8');
  if (utf8.toString('utf8') === text) return `e${utf8.toString('base64url')}`;
  return `u${Buffer.from(text, 'utf16le').toString('base64url')}`;
}

/** Strict inverse of `toPayload`: `undefined` unless re-encoding gives back the same payload. */
function fromPayload(payload: string): string | undefined {
  const kind = payload.charAt(0);
  const encoded = payload.slice(1);
  if (encoded === '' || !VALID_ID.test(encoded) || (kind !== 'e' && kind !== 'u')) return undefined;
  const bytes = Buffer.from(encoded, 'base64url');
  if (bytes.toString('base64url') !== encoded) return undefined;
  const text =
    kind === 'e' ? bytes.toString('utf8') : bytes.length % 2 === 0 ? bytes.toString('utf16le') : undefined;
  if (text === undefined || toPayload(text) !== payload) return undefined;
  return text;
}
