/**
 * Hostile input and the network's odd corners: what a caller, a web page or an upstream can try that is
 * not a fault of the upstream's answer alone, each with the outcome tpx-transport gives and the test
 * that pins it. `docs/reliability.md` lists them (written with the fault suite's report), and its test
 * checks that every case is there and that each named test exists in its file.
 *
 * @module
 */

export interface HostileCase {
  /** The class of hostile input or odd corner. */
  group: string;
  /** What is tried. */
  input: string;
  /** What the caller (or the page, or the client) gets. */
  outcome: string;
  /** The test that pins it: its file, and text of its title as written there. */
  test: { file: string; title: string };
}

const BROWSER = 'a web page driving the proxy';
const LOOP = 'one request freezing every other';
const JSON_EDGES = 'JSON at the edges';
const RETRIES = 'retries and deadlines';
const CLIENT = 'HTTP client conformance';
const SERVER = 'HTTP server conformance';

export const HOSTILE_CASES: readonly HostileCase[] = [
  {
    group: BROWSER,
    input: 'cross-site `POST` with `Content-Type: text/plain` (no CORS preflight), no proxy token',
    outcome: '415, nothing sent upstream',
    test: {
      file: 'test/security/browser-requests.test.ts',
      title: 'refuses a text/plain POST (a form or fetch from another site) with 415 and sends nothing',
    },
  },
  {
    group: BROWSER,
    input: 'a request with an `Origin` that is not allowed (`null` included)',
    outcome: '403 `permission_error`',
    test: {
      file: 'test/security/browser-requests.test.ts',
      title: 'answers 403 to a request carrying an Origin that is not allowed, null included',
    },
  },
  {
    group: BROWSER,
    input: '`Host` naming a foreign name (DNS rebinding), on every route',
    outcome: '400, `/healthz` included; loopback names served',
    test: {
      file: 'test/security/browser-requests.test.ts',
      title: 'refuses a foreign name with 400 on every route, /healthz included, and serves loopback names',
    },
  },
  {
    group: BROWSER,
    input: 'a missing, repeated or malformed `Host`',
    outcome:
      "400 in the Messages error shape; only an HTTP/1.0 `GET /healthz` without `Host` (a balancer's default health check) is served",
    test: {
      file: 'test/security/browser-requests.test.ts',
      title: 'answers 400 in the Messages shape to a missing, repeated or malformed Host',
    },
  },
  {
    group: LOOP,
    input: '`count_tokens` with a 25 KB run of characters and no space',
    outcome: '`/healthz` keeps answering while it is counted',
    test: {
      file: 'test/e2e/count-tokens-loop.test.ts',
      title: 'leaves /healthz answering while count_tokens counts a 25 KB run with no space',
    },
  },
  {
    group: LOOP,
    input: '`count_tokens` with 150 KB runs of letters, of mixed symbols, of random printable characters',
    outcome: 'the event loop is never held long; the count is an estimate past a size',
    test: {
      file: 'test/e2e/count-tokens-loop.test.ts',
      title: 'stays bounded for 150 KB runs of letters, of mixed symbols and of random printable characters',
    },
  },
  {
    group: JSON_EDGES,
    input: 'a request body nested 100,000 levels deep',
    outcome: '400 `invalid_request_error`, never a 5xx',
    test: {
      file: 'test/security/json-edges.test.ts',
      title: 'answers 400 invalid_request_error to 100,000 levels of nesting, wherever they are',
    },
  },
  {
    group: JSON_EDGES,
    input: 'a request body with bytes that are not UTF-8',
    outcome: '400, never sent on with U+FFFD in their place',
    test: {
      file: 'test/security/json-edges.test.ts',
      title: 'answers 400 to bytes that are not UTF-8, never sending U+FFFD on',
    },
  },
  {
    group: JSON_EDGES,
    input: 'an upstream answer nested 100,000 levels deep',
    outcome: '502 `api_error`, and the proxy serves on',
    test: {
      file: 'test/security/json-edges.test.ts',
      title: 'answers 502 api_error to an upstream answer nesting 100,000 levels deep, then serves on',
    },
  },
  {
    group: RETRIES,
    input:
      'official SDK (default 2 retries) → `tpx serve` → upstream answering 529 / 503 / 429 to everything',
    outcome: '3 upstream requests (the proxy attempts only, not 3 × 3), answer says `x-should-retry: false`',
    test: {
      file: 'test/e2e/serve-retry-layering.test.ts',
      title: 'upstream answering %i to everything sees only the proxy attempts of one SDK call',
    },
  },
  {
    group: RETRIES,
    input: 'the same, with the proxy retries turned off (`--max-retries 0`)',
    outcome: "one proxy attempt per SDK attempt; the upstream's `x-should-retry` goes back as it was",
    test: {
      file: 'test/e2e/serve-retry-layering.test.ts',
      title: 'counts one proxy attempt per SDK attempt when the proxy retries are turned off',
    },
  },
  {
    group: RETRIES,
    input: '429 with `retry-after: 90` (more than a minute, within the total deadline)',
    outcome: 'waits 90 s, then retries',
    test: {
      file: 'test/e2e/anthropic-provider.test.ts',
      title: 'honours a retry-after longer than a minute when the wait fits in the total deadline',
    },
  },
  {
    group: RETRIES,
    input: '429 with `retry-after: 3600`, past the total deadline',
    outcome: 'the 429 at once, with its `retry-after` and `x-should-retry: false`; no sleep',
    test: {
      file: 'test/e2e/serve-retry-layering.test.ts',
      title: 'says x-should-retry: false when the retry-after asked for runs past the total deadline',
    },
  },
  {
    group: RETRIES,
    input: '`retry-after: 0`, `retry-after-ms: 0`',
    outcome: 'the usual backoff (500 ms first), not an immediate retry',
    test: {
      file: 'test/e2e/anthropic-provider.test.ts',
      title: 'backs off instead of retrying at once on %s: %s',
    },
  },
  {
    group: RETRIES,
    input: '`retry-after` as seconds, an HTTP-date (three forms), 0, negative, garbage',
    outcome: 'one parser: a delay, a point in time, or no hint',
    test: {
      file: 'src/translate/parse-retry-after.test.ts',
      title: 'ignores the malformed retry-after value',
    },
  },
  {
    group: RETRIES,
    input: 'a connect slower than the first-byte deadline (a listener that never accepts)',
    outcome: '`MODEL_ETIMEOUT` naming the connect deadline',
    test: {
      file: 'test/e2e/deadlines.test.ts',
      title:
        'names the connect deadline, not the first-byte one, when connecting outlasts the first-byte deadline',
    },
  },
  {
    group: RETRIES,
    input: 'a fast connect and a first byte that never comes',
    outcome: '`MODEL_ETIMEOUT` naming the first-byte deadline, counted from the request being written',
    test: {
      file: 'test/e2e/deadlines.test.ts',
      title: 'counts the first-byte deadline from the request being written, once the connection is made',
    },
  },
  {
    group: RETRIES,
    input:
      'explicit tpx options (`tpxToken`, `tpxTokenFile`, `tpxTokenCommand`) with `ANTHROPIC_API_KEY` in the environment',
    outcome: 'provider `tpx`: explicit credentials are used before the environment',
    test: {
      file: 'test/e2e/selection.test.ts',
      title: 'option even when ANTHROPIC_API_KEY is in the environment',
    },
  },
  {
    group: RETRIES,
    input: '`tpx doctor --token …` with `ANTHROPIC_API_KEY` left in the shell',
    outcome: 'provider `tpx`',
    test: {
      file: 'test/e2e/cli.test.ts',
      title: 'doctor uses the --token flag over an ANTHROPIC_API_KEY left in the environment',
    },
  },
  {
    group: RETRIES,
    input:
      '429 with a rate-limit type (OpenAI `requests`/`tokens`/`rate_limit_exceeded`, Anthropic `rate_limit_error`) and a message saying overloaded, too long, context length',
    outcome: '429 `rate_limit_error`: the wording never overrides a stated status or type',
    test: {
      file: 'src/translate/map-upstream-error.test.ts',
      title: 'body as 429 rate_limit_error: %s',
    },
  },
  {
    group: RETRIES,
    input:
      'two caller tool ids made up to decode to one upstream id (`tpx_d2eY2FsbF9hYmM` and the encoded form of that string, …)',
    outcome: '`MODEL_EINVAL`; through the proxy 400 `invalid_request_error`; nothing sent upstream',
    test: {
      file: 'test/e2e/serve-retry-layering.test.ts',
      title: 'answers the proxy client 400 invalid_request_error, for a message and for a stream',
    },
  },
  {
    group: RETRIES,
    input:
      'an upstream that gives the tool calls of one answer one id, an empty id or none, or ids shaped like the encoded ones',
    outcome:
      'distinct `tool_use` ids; the next request sends every result under the wire id of its own call, on both wires',
    test: {
      file: 'test/e2e/repeated-tool-ids.test.ts',
      title: 'pairs every result with its own call through tpx serve, with the SDK as the client',
    },
  },
  {
    group: RETRIES,
    input: 'an upstream answer over the response limit (streamed, in pieces, or declared by content-length)',
    outcome: "502 `api_error` to the proxy's client (the upstream's fault), never a 413",
    test: {
      file: 'test/e2e/serve-retry-layering.test.ts',
      title: 'proxy as a 502 api_error, not a 413 about its request',
    },
  },
  {
    group: CLIENT,
    input:
      'an interim `100 Continue` from the upstream before its answer, on every exchange of a kept-alive connection',
    outcome: 'skipped; the final answer is read, for both providers, JSON and streamed',
    test: {
      file: 'test/e2e/interim-responses.test.ts',
      title: 'takes the answer after a 100 Continue, exchange after exchange on one kept-alive connection',
    },
  },
  {
    group: SERVER,
    input: 'an upload over the size limit, written whole before the client reads (content-length or chunked)',
    outcome: '413 `request_too_large` read by the client, the connection usable after',
    test: {
      file: 'test/e2e/serve-conformance.test.ts',
      title: 'lets a client that writes its whole body before reading',
    },
  },
  {
    group: SERVER,
    input: 'an upload over the size limit from the official SDK, five times',
    outcome: '413 `request_too_large` every time, no re-upload',
    test: {
      file: 'test/e2e/serve-conformance.test.ts',
      title: 'is answered 413 request_too_large that the official SDK reads every time, without re-uploading',
    },
  },
  {
    group: SERVER,
    input: 'a request body that stops arriving',
    outcome: '408 `timeout_error` once silent for the idle timeout, then closed',
    test: {
      file: 'test/e2e/serve-conformance.test.ts',
      title: 'is answered 408 timeout_error and closed once its body is silent for the idle timeout',
    },
  },
  {
    group: SERVER,
    input: 'request headers that stop arriving',
    outcome: '408 in the Messages error shape',
    test: {
      file: 'test/e2e/serve-conformance.test.ts',
      title: 'is answered 408 in the Messages shape when its headers stop arriving',
    },
  },
  {
    group: SERVER,
    input:
      'what the HTTP parser refuses: a malformed request line, an unknown method, a bad header name or value, conflicting lengths, a bad chunk size, headers over 16 KiB',
    outcome: '400 (431 for the headers) in the Messages error shape, one answer, then closed',
    test: {
      file: 'test/e2e/serve-conformance.test.ts',
      title: 'in the Messages error shape and closes',
    },
  },
  {
    group: JSON_EDGES,
    input: 'integers beyond 2^53 and `1e400` in a tool input',
    outcome: 'sent upstream as written, in the function arguments',
    test: {
      file: 'test/security/json-numbers.test.ts',
      title: 'sends the numbers of a tool input upstream as written',
    },
  },
  {
    group: JSON_EDGES,
    input: "integers beyond 2^53 and `1e400` in an upstream tool call's arguments",
    outcome: "answered to the proxy's client as written, JSON and streamed",
    test: {
      file: 'test/security/json-numbers.test.ts',
      title: 'answers with the numbers of a tool call as the upstream wrote them, JSON and streamed',
    },
  },
  {
    group: JSON_EDGES,
    input: 'such a number in a field the protocol types as a number (`max_tokens`)',
    outcome: '400 `invalid_request_error` naming the field, nothing sent',
    test: {
      file: 'test/security/json-numbers.test.ts',
      title:
        'refuses one a double cannot hold with 400 invalid_request_error naming the field, sending nothing',
    },
  },
];
