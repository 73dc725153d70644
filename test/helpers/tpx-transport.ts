/**
 * A `tpx` transport aimed at a scripted upstream, as the end-to-end tests of one wire build it: no
 * environment read, a fixed token, no retries (a test sees the first attempt's outcome).
 *
 * @module
 */
import { createTransport } from '../../src/index.js';
import type { ModelTransport, TransportOptions } from '../../src/transport/types.js';

/**
 * A transport whose `tpx` provider talks `wire` to the OpenAI-compatible server at `serverUrl`; `options`
 * adds to (or overrides) those settings, e.g. `{ tpxDialect: 'gemini' }`.
 */
export function tpxTransportTo(
  serverUrl: string,
  wire: 'chat' | 'responses',
  options: TransportOptions = {},
): ModelTransport {
  return createTransport({
    env: {},
    tpxToken: 'upstream-token-0123456789',
    tpxBaseUrl: `${serverUrl}/v1`,
    tpxWire: wire,
    maxRetries: 0,
    ...options,
  });
}
