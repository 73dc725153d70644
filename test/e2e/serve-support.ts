/**
 * Shared pieces of the `tpx serve` end-to-end tests: a pino logger writing into memory, and a proxy in
 * front of the mock model with everything closed again in one call.
 *
 * @module
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import {
  startMockModel,
  type MockModelOptions,
  type MockModelServer,
} from '../../src/mock-model/mock-model.js';
import { startServer, type RunningServer, type ServeOptions } from '../../src/server/start-server.js';
import { createTransport } from '../../src/transport/create-transport.js';
import { waitFor } from '../helpers/wait-for.js';
import type { ModelTransport, TransportOptions } from '../../src/transport/types.js';

/** A logger whose lines stay in memory. */
export interface CapturedLogs {
  logger: pino.Logger;
  /** Everything written so far. */
  text(): string;
  /** The lines written so far, parsed. */
  lines(): Record<string, unknown>[];
}

export function captureLogs(): CapturedLogs {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = pino({ level: 'debug' }, destination);
  return {
    logger,
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** The OAuth token the proxy's transport uses towards the mock model. */
export const UPSTREAM_TOKEN = 'tpx-upstream-oauth-token-0123456789';

/** A proxy on the `tpx` path in front of a mock model. */
export interface TpxProxy {
  mock: MockModelServer;
  transport: ModelTransport;
  server: RunningServer;
  logs: CapturedLogs;
  close(): Promise<void>;
}

export async function startTpxProxy(
  options: {
    mock?: MockModelOptions;
    transport?: TransportOptions;
    serve?: Omit<ServeOptions, 'transport'>;
  } = {},
): Promise<TpxProxy> {
  const mock = await startMockModel({ token: UPSTREAM_TOKEN, ...options.mock });
  const transport = createTransport({
    env: {},
    tpxToken: UPSTREAM_TOKEN,
    tpxBaseUrl: mock.url,
    ...options.transport,
  });
  const logs = captureLogs();
  const server = await startServer({ transport, port: 0, logger: logs.logger, ...options.serve });
  return {
    mock,
    transport,
    server,
    logs,
    async close() {
      await server.close();
      await transport.close();
      await mock.close();
    },
  };
}

/** Polls `condition` every 10 ms until it holds, failing after `timeoutMs`. */
export function eventually(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  return waitFor(() => Promise.resolve(condition()), 'condition not met', timeoutMs, 10);
}

/** Sends a one-line JSON prompt to the proxy at `baseUrl` and reads the whole answer; resolves to its status. */
export async function sendOneLinePrompt(baseUrl: string, model = 'claude-test'): Promise<number> {
  const response = await fetch(`${baseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 32, messages: [{ role: 'user', content: 'Hello' }] }),
  });
  await response.arrayBuffer();
  return response.status;
}
