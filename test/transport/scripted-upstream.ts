/**
 * What the `test/transport` files share: one scripted upstream on loopback per file, started before its
 * tests and closed after them, answering each request as the running test last said; transports made
 * on it that are closed after each test; and a way to await a refusal.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { TransportError } from '../../src/errors.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport, TransportOptions } from '../../src/transport/types.js';
import {
  startScriptedServer,
  type RecordedRequest,
  type ScriptedServer,
  type Step,
} from '../helpers/scripted-server.js';

export interface ScriptedUpstream {
  /** The upstream, once the file's tests run. */
  readonly server: ScriptedServer;
  /** How the upstream answers the next requests; each test sets it. */
  answer: (record: RecordedRequest) => Step;
  /** A transport with `options` and no environment, closed after the test. */
  track(options: TransportOptions): ModelTransport;
  /** An anthropic transport on the upstream: the file's defaults, then `options`. */
  anthropicTransport(options?: TransportOptions): ModelTransport;
  /** A tpx transport on the upstream's `/v1`: the file's defaults, then `options`. */
  tpxTransport(options?: TransportOptions): ModelTransport;
}

/**
 * Registers the hooks that start and close the file's upstream and close each test's transports.
 *
 * @param credentials the API key and OAuth token the file's transports present
 * @param defaults options every `anthropicTransport` / `tpxTransport` of the file starts from
 */
export function useScriptedUpstream(
  credentials: { key: string; token: string },
  defaults: TransportOptions,
): ScriptedUpstream {
  let server: ScriptedServer | undefined;
  const transports: ModelTransport[] = [];
  const upstream: ScriptedUpstream = {
    get server(): ScriptedServer {
      if (server === undefined)
        throw new Error('the scripted upstream starts before the tests, not at import');
      return server;
    },
    answer: () => {
      throw new Error('this test did not say how the upstream answers');
    },
    track(options) {
      const transport = createTransport({ env: {}, ...options });
      transports.push(transport);
      return transport;
    },
    anthropicTransport(options = {}) {
      return upstream.track({
        anthropicApiKey: credentials.key,
        anthropicBaseUrl: upstream.server.url,
        ...defaults,
        ...options,
      });
    },
    tpxTransport(options = {}) {
      return upstream.track({
        tpxToken: credentials.token,
        tpxBaseUrl: `${upstream.server.url}/v1`,
        ...defaults,
        ...options,
      });
    },
  };
  beforeAll(async () => {
    server = await startScriptedServer((record) => upstream.answer(record));
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((transport) => transport.close()));
  });
  afterAll(async () => {
    await server?.close();
  });
  return upstream;
}

/** The error `promise` rejects with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<TransportError> {
  try {
    await promise;
  } catch (error) {
    return error as TransportError;
  }
  throw new Error('expected a rejection');
}
