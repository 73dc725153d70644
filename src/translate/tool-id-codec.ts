/**
 * The tool-id codec: a stateless mapping between the tool-call ids an OpenAI-compatible provider emits
 * and the `tool_use` ids a Messages caller sees (`^[A-Za-z0-9_-]+$`), and back to the id each call goes
 * upstream under on the next turn (its *wire id*).
 *
 * Because it keeps no state, the proxy needs no memory of a conversation, and any replica can translate
 * the next request: the caller's `tool_result.tool_use_id` alone says which wire id to send back.
 *
 * Encoding, for a provider id `p` at its `n`-th occurrence within one response (n = 1, 2, …):
 *
 * | `p`                                                        | Messages id               | wire id (decoded) |
 * |------------------------------------------------------------|---------------------------|-------------------|
 * | valid (`[A-Za-z0-9_-]+`, ≤ 200 chars), not `tpx_`-prefixed, n = 1 | `p` itself         | `p`               |
 * | anything else, n = 1 (bad characters, too long, `tpx_…`)     | `tpx_` + payload(`p`)     | `p`               |
 * | any `p`, n ≥ 2 (the provider repeated an id)               | `tpx_d<n>` + payload(`p`) | the Messages id   |
 * | missing or empty                                           | `tpx_g` + a fresh random id | the Messages id |
 *
 * where payload(`p`) is `e` + base64url(UTF-8 of `p`), or, for a string with lone surrogates that
 * UTF-8 cannot carry, `u` + base64url(UTF-16LE of `p`).
 *
 * Decoding: `tpx_e…` and `tpx_u…` ids this codec wrote decode to the provider's exact original string;
 * every other id decodes to itself. So a first occurrence goes back under the id the provider emitted,
 * and a repeat, or a call that came without an id, goes back under the distinct id the caller was shown:
 * a provider that gave two calls one id cannot tell them apart by that id anyway, and sending the id back
 * twice would pair two results with one call. Each call of a response thus keeps a wire id of its own,
 * and the next request pairs every call with its result one-to-one.
 *
 * Why no two calls of one response share a Messages id or a wire id: the rows have disjoint images
 * (unprefixed / `tpx_e`,`tpx_u` / `tpx_d` / `tpx_g`), the row that passes ids unchanged excludes the
 * reserved prefix, each payload encoding is injective and tagged, the occurrence number separates repeats
 * of one id, and {@link createToolIdIssuer} skips an occurrence number (or a generated id) whose wire id
 * an earlier call of the same response already holds — as when a provider emits, besides a repeated
 * `call_abc`, the literal string `tpx_d2eY2FsbF9hYmM`.
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
 * Decodes a caller's tool id to the id its call goes upstream under (its wire id): the id the provider
 * emitted for the first call that used it, and the caller's id itself for a repeat or a call that came
 * without an id. Total: an id this codec did not produce (a caller's own history, say) is returned
 * unchanged.
 *
 * @example
 * decodeToolId('tpx_eZnVuY3Rpb25zLnJlYWQ6MA') // → 'functions.read:0'
 * decodeToolId('tpx_d2eY2FsbF9hYmM')          // → 'tpx_d2eY2FsbF9hYmM' (the second `call_abc`)
 */
export function decodeToolId(messagesId: string): string {
  if (!messagesId.startsWith(RESERVED_PREFIX)) return messagesId;
  // Repeats (`tpx_d…`) and generated ids (`tpx_g…`) fail `fromPayload`'s tag check and so are their
  // own wire ids: sending the provider's repeated id back would give two calls one id.
  const decoded = fromPayload(messagesId.slice(RESERVED_PREFIX.length));
  // A first occurrence of an id that passes through unchanged is never encoded, so `tpx_e` + its
  // payload is not this codec's output: decoding it would give two caller ids one provider id.
  if (decoded === undefined || isPlainId(decoded)) return messagesId;
  return decoded;
}

/**
 * Makes the id issuer of one response: called once per tool call, in block order, it returns that call's
 * Messages id, counting repeats of a provider id so that every call gets a Messages id and a wire id
 * (`decodeToolId` of it) no earlier call of the response holds. A stream and a whole answer number the
 * same calls the same way.
 *
 * @param generateId source of fresh ids for calls that came without one (must return `[A-Za-z0-9_-]+`)
 *
 * @example
 * const issue = createToolIdIssuer(gen);
 * issue('call_abc') // → 'call_abc'
 * issue('call_abc') // → 'tpx_d2eY2FsbF9hYmM'
 * issue('')         // → 'tpx_g' + a generated id
 */
export function createToolIdIssuer(
  generateId: () => string,
): (providerId: string | null | undefined) => string {
  const wireIdsInUse = new Set<string>();
  const lastOccurrence = new Map<string, number>();
  return (providerId) => {
    let messagesId: string;
    if (providerId === undefined || providerId === null || providerId === '') {
      // A generated id is its own wire id; draw again in the (hostile) case that the provider already
      // emitted that very string for an earlier call.
      do {
        messagesId = encodeToolId(undefined, 1, generateId);
      } while (wireIdsInUse.has(messagesId));
    } else {
      let occurrence = lastOccurrence.get(providerId) ?? 0;
      // Usually one step; more only when a provider emitted, as an id of its own, the wire id a repeat
      // would get.
      do {
        messagesId = encodeToolId(providerId, ++occurrence, generateId);
      } while (wireIdsInUse.has(decodeToolId(messagesId)));
      lastOccurrence.set(providerId, occurrence);
    }
    wireIdsInUse.add(decodeToolId(messagesId));
    return messagesId;
  };
}

/**
 * Assigns Messages ids to all tool calls of one response, in order (see {@link createToolIdIssuer}).
 * Returns one id per input.
 */
export function encodeToolIds(
  providerIds: readonly (string | null | undefined)[],
  generateId: () => string,
): string[] {
  const issue = createToolIdIssuer(generateId);
  return providerIds.map((providerId) => issue(providerId));
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
