/**
 * The observability benchmark's fixed-rate load generator: requests leave on the schedule whatever the
 * server does, a late timer does not lower the count, and requests beyond the in-flight bound are
 * counted as missed rather than queued. Counts only: how fast anything is belongs in `bench/`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runFixedRateLoad } from '../../bench/harness/fixed-rate-load.js';
import type { LoadTarget } from '../../bench/harness/load.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const servers: ReturnType<typeof createServer>[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** A loopback server that counts the requests it got and the most it held at once. */
async function countingServer(handle: Handler) {
  const counts = { received: 0, open: 0, mostOpen: 0 };
  const server = createServer((request, response) => {
    counts.received++;
    counts.open++;
    counts.mostOpen = Math.max(counts.mostOpen, counts.open);
    response.on('close', () => counts.open--);
    request.resume();
    request.on('end', () => handle(request, response));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const target: LoadTarget = {
    origin: `http://127.0.0.1:${port}`,
    path: '/v1/messages',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  };
  return { counts, target };
}

const answerAtOnce: Handler = (_request, response) => response.end('{"ok":true}');

describe('runFixedRateLoad', () => {
  it('sends every request of the schedule, warm-up included, when the server keeps up', async () => {
    const { counts, target } = await countingServer(answerAtOnce);
    // 100 a second: ten due in the 100 ms warm-up, thirty in the 300 ms window.
    const result = await runFixedRateLoad(target, {
      ratePerSecond: 100,
      maxInFlight: 64,
      warmupMs: 100,
      durationMs: 300,
      minRequests: 0,
    });
    expect(result.schedule).toMatchObject({ askedRate: 100, due: 30, missed: 0 });
    expect(counts.received).toBe(40);
    expect(result.completedTotal).toBe(40);
    expect(result.errors).toBe(0);
  });

  it('starts at once the requests a late timer fell behind on, so the rate holds', async () => {
    let isFirst = true;
    const { counts, target } = await countingServer((request, response) => {
      if (isFirst) {
        // Block the event loop (the generator's timer with it) for 250 ms: 25 requests fall due.
        isFirst = false;
        const until = Date.now() + 250;
        while (Date.now() < until);
      }
      answerAtOnce(request, response);
    });
    const result = await runFixedRateLoad(target, {
      ratePerSecond: 100,
      maxInFlight: 64,
      warmupMs: 0,
      durationMs: 500,
      minRequests: 0,
    });
    expect(result.schedule).toMatchObject({ due: 50, missed: 0 });
    expect(counts.received).toBe(50);
    // Sent within the 500 ms they were due in: 100 a second. A timer that sent one request a tick
    // after the stall would have sent about 26 in time (52 a second); the margin is for a busy machine.
    expect(result.schedule.achievedRate).toBeGreaterThan(80);
  });

  it('counts a request due while the in-flight bound is reached as missed, and does not queue it', async () => {
    // Holds every request for 2 s, far past the 200 ms schedule.
    const { counts, target } = await countingServer((request, response) => {
      setTimeout(() => answerAtOnce(request, response), 2_000);
    });
    const result = await runFixedRateLoad(target, {
      ratePerSecond: 100,
      maxInFlight: 2,
      warmupMs: 0,
      durationMs: 200,
      minRequests: 0,
    });
    expect(counts.mostOpen).toBe(2);
    expect(counts.received).toBe(2);
    expect(result.schedule).toMatchObject({ due: 20, missed: 18 });
    expect(result.completedTotal).toBe(2);
  });

  it('counts an answer other than 200 as an error, with its status', async () => {
    const { target } = await countingServer((_request, response) => {
      response.statusCode = 500;
      response.end('{"error":"no"}');
    });
    const result = await runFixedRateLoad(target, {
      ratePerSecond: 50,
      maxInFlight: 8,
      warmupMs: 0,
      durationMs: 100,
      minRequests: 0,
    });
    expect(result.errors).toBe(5);
    expect(result.firstError).toBe('status 500');
    expect(result.completedTotal).toBe(0);
  });

  it('refuses a rate that is not above zero', async () => {
    const { target } = await countingServer(answerAtOnce);
    await expect(
      runFixedRateLoad(target, { ratePerSecond: 0, maxInFlight: 1, warmupMs: 0, durationMs: 10 }),
    ).rejects.toThrow(/0 requests a second/);
  });
});
