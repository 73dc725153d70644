import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import type { ModelTransport } from '../transport/types.js';
import { isLoopbackHost, startServer } from './start-server.js';

const transport: ModelTransport = {
  provider: 'none',
  selection: { provider: 'none', reason: 'no credentials' },
  send: () => Promise.reject(new Error('unused')),
  // eslint-disable-next-line require-yield
  async *stream() {
    throw new Error('unused');
  },
  close: () => Promise.resolve(),
};

async function configError(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(isTransportError(error) && error.code).toBe('MODEL_ECONFIG');
  return (error as Error).message;
}

describe('isLoopbackHost', () => {
  it('recognises loopback names and addresses', () => {
    for (const host of [
      '127.0.0.1',
      '127.1.2.3',
      'localhost',
      'LOCALHOST',
      '::1',
      '[::1]',
      '::ffff:127.0.0.1',
    ]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
  });

  it('treats every other interface as reachable from outside', () => {
    for (const host of ['0.0.0.0', '::', '', '10.0.0.5', '192.168.1.1', 'example.com', '128.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe('startServer options', () => {
  it('refuses a non-loopback host without a proxy token, naming the ways out', async () => {
    const message = await configError(startServer({ transport, host: '0.0.0.0', port: 0, logger: false }));
    expect(message).toContain('TPX_PROXY_TOKEN');
    expect(message).toContain('insecure-no-auth');
  });

  it('treats an empty proxy token as no token', async () => {
    await configError(startServer({ transport, host: '0.0.0.0', port: 0, proxyToken: '', logger: false }));
  });

  it('refuses an invalid port, body limit or grace period', async () => {
    expect(await configError(startServer({ transport, port: 70_000, logger: false }))).toContain('port');
    expect(
      await configError(startServer({ transport, port: 0, maxRequestBytes: 0, logger: false })),
    ).toContain('maxRequestBytes');
    expect(
      await configError(startServer({ transport, port: 0, shutdownGraceMs: -1, logger: false })),
    ).toContain('shutdownGraceMs');
  });
});
