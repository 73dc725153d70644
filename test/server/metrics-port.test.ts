/**
 * The metrics port of its own (`tpx serve --metrics-port`): what it answers a wrong method with, what a
 * refused address carries as its cause, and that closing it stops it answering.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isTransportError } from '../../src/errors.js';
import { startMetricsServer } from '../../src/server/metrics-server.js';

const SOURCE = { contentType: 'text/plain; version=0.0.4', render: () => Promise.resolve('up 1\n') };

function call(
  url: string,
  method: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method, headers: { connection: 'close' } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('the metrics port', () => {
  it('answers another method than GET or HEAD with 405, allow: GET, as plain text', async () => {
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0, source: SOURCE });
    try {
      const answer = await call(`${server.url}/metrics`, 'DELETE');
      expect([answer.status, answer.headers['allow'], answer.headers['content-type']]).toStrictEqual([
        405,
        'GET',
        'text/plain; charset=utf-8',
      ]);
    } finally {
      await server.close();
    }
  });

  it('refuses an address in use with MODEL_ECONFIG whose cause is the listen error', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const refusal: unknown = await startMetricsServer({ host: '127.0.0.1', port, source: SOURCE }).catch(
        (error: unknown) => error,
      );
      expect(isTransportError(refusal) && refusal.code).toBe('MODEL_ECONFIG');
      expect((refusal as Error).message).toBe(`cannot listen for metrics on 127.0.0.1:${port}: EADDRINUSE`);
      expect(((refusal as Error).cause as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('stops answering once closed', async () => {
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0, source: SOURCE });
    expect((await call(`${server.url}/metrics`, 'GET')).status).toBe(200);
    await server.close();
    await expect(call(`${server.url}/metrics`, 'GET')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
