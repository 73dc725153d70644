/**
 * The one list of upstream response headers tpx-transport keeps: request ids, retry hints and
 * rate-limit state. Both providers report them with every response (`onResponse`) and every upstream
 * error carries them (`TransportError.headers`).
 *
 * The proxy passes only part of them back to its own client (`isPassedBack`): never a request id, since
 * each of its answers carries exactly one of its own, and not the OpenAI-style `x-ratelimit-*` names of
 * a Chat Completions upstream, which no Messages client reads; their meaning differs from Anthropic's
 * `anthropic-ratelimit-*` headers, so they are not renamed either.
 *
 * @module
 */

interface KeptHeader {
  /** The whole name, or its beginning when `prefix` is set. Lower-case. */
  name: string;
  prefix: boolean;
  /** Whether the proxy hands it back to its client. */
  passedBack: boolean;
}

const KEPT_HEADERS: readonly KeptHeader[] = [
  { name: 'request-id', prefix: false, passedBack: false },
  { name: 'x-request-id', prefix: false, passedBack: false },
  { name: 'retry-after', prefix: false, passedBack: true },
  { name: 'retry-after-ms', prefix: false, passedBack: true },
  { name: 'x-should-retry', prefix: false, passedBack: true },
  { name: 'anthropic-ratelimit-', prefix: true, passedBack: true },
  { name: 'x-ratelimit-', prefix: true, passedBack: false },
];

function keptHeader(lowerCaseName: string): KeptHeader | undefined {
  return KEPT_HEADERS.find((header) =>
    header.prefix ? lowerCaseName.startsWith(header.name) : lowerCaseName === header.name,
  );
}

/**
 * The headers of an upstream response that tpx-transport keeps, with lower-case names; a header
 * without a value is left out.
 */
export function pickResponseHeaders(
  headers: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    const lower = name.toLowerCase();
    if (value !== undefined && keptHeader(lower) !== undefined) picked[lower] = value;
  }
  return picked;
}

/** Whether a header (any case) is one the proxy passes back to its client from an upstream answer. */
export function isPassedBack(name: string): boolean {
  return keptHeader(name.toLowerCase())?.passedBack === true;
}
