/**
 * A `tpx` transport aimed at a scripted upstream, as the end-to-end tests of one wire build it: no
 * environment read, a fixed token, no retries (a test sees the first attempt's outcome).
 *
 * @module
 */
import { createTransport } from '../../src/index.js';
import type { ModelTransport } from '../../src/transport/types.js';

/** A transport whose `tpx` provider talks `wire` to the OpenAI-compatible server at `serverUrl`. */
export function tpxTransportTo(serverUrl: string, wire: 'chat' | 'responses'): ModelTransport {
  return createTransport({
    env: {},
    tpxToken: 'upstream-token-0123456789',
    tpxBaseUrl: `${serverUrl}/v1`,
    tpxWire: wire,
    maxRetries: 0,
  });
}
