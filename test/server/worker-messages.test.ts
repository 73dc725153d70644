/**
 * The worker side of `tpx serve --workers`, through the messages a worker exchanges with its primary:
 * a worker drains when the primary sends the drain message (and only then), and asks the primary for
 * every worker's metrics, matching each answer to its question.
 *
 * The primary is played by the test: its messages are handed to the `process` `message` listeners the
 * code under test added, and what the worker sends is what `process.send` is called with.
 */
import cluster from 'node:cluster';
import { Counter, Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DRAIN_MESSAGE, drainRequested, isWorkerProcess } from '../../src/server/worker-process.js';
import { workerMetricsSource } from '../../src/server/workers.js';

/** Whether `promise` has settled after the pending callbacks ran. */
async function state(promise: Promise<unknown>): Promise<'pending' | 'resolved' | 'rejected'> {
  let result: 'pending' | 'resolved' | 'rejected' = 'pending';
  promise.then(
    () => (result = 'resolved'),
    () => (result = 'rejected'),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return result;
}

/** The `message` listeners of the test runner itself, which must not be handed the primary's messages. */
let runnerListeners: unknown[] = [];
beforeEach(() => {
  runnerListeners = process.listeners('message');
});

/** Delivers a message from the primary to the listeners this process added since the test began. */
function fromPrimary(message: unknown): void {
  for (const listener of process.listeners('message')) {
    if (!runnerListeners.includes(listener)) (listener as (message: unknown) => void)(message);
  }
}

/** Whether the process counts as a cluster worker. */
function beWorker(isWorker: boolean): void {
  Object.defineProperty(cluster, 'isWorker', { value: isWorker, configurable: true, writable: true });
}

/** `process` with its IPC channel's `send`, which the test replaces. */
const ipc = process as { send?: (message: unknown) => boolean };
const originalIsWorker = cluster.isWorker;
const originalSend = ipc.send;

afterEach(() => {
  beWorker(originalIsWorker);
  if (originalSend === undefined) delete ipc.send;
  else ipc.send = originalSend;
  vi.useRealTimers();
});

describe('drainRequested', () => {
  it('never resolves, and does not listen, in a process that is not a worker', async () => {
    beWorker(false);
    expect(isWorkerProcess()).toBe(false);
    const listeners = process.listenerCount('message');
    const drain = drainRequested();
    expect(process.listenerCount('message')).toBe(listeners);
    fromPrimary({ type: DRAIN_MESSAGE });
    expect(await state(drain)).toBe('pending');
  });

  it('resolves in a worker at the drain message only, and stops listening then', async () => {
    beWorker(true);
    expect(isWorkerProcess()).toBe(true);
    const listeners = process.listenerCount('message');
    const drain = drainRequested();
    expect(process.listenerCount('message')).toBe(listeners + 1);
    for (const other of [DRAIN_MESSAGE, null, undefined, 7, {}, { type: 'tpx:metrics-response' }]) {
      fromPrimary(other);
    }
    expect(await state(drain)).toBe('pending');
    fromPrimary({ type: 'tpx:drain' });
    expect(await state(drain)).toBe('resolved');
    expect(process.listenerCount('message')).toBe(listeners);
  });
});

describe('workerMetricsSource', () => {
  let sent: unknown[];
  beforeEach(() => {
    sent = [];
    ipc.send = (message) => {
      sent.push(message);
      return true;
    };
  });

  // prom-client starts answering the primary's requests at the first AggregatorRegistry of the process,
  // and only if the process is a worker then: this must stay the first test to make a metrics source.
  it('makes the given registry the one whose metrics this worker gives the primary to sum', async () => {
    beWorker(true);
    const registry = new Registry();
    new Counter({ name: 'worker_requests_total', help: 'Requests.', registers: [registry] }).inc(2);
    workerMetricsSource(registry);
    fromPrimary({ type: 'prom-client:getMetricsReq', requestId: 7 });
    await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 10_000 });
    expect(sent).toStrictEqual([
      { type: 'prom-client:getMetricsRes', requestId: 7, metrics: [await registry.getMetricsAsJSON()] },
    ]);
    expect(sent).toMatchObject([{ metrics: [[{ name: 'worker_requests_total', values: [{ value: 2 }] }]] }]);
  });

  it('asks the primary with a new id each time and answers with the body sent back for that id', async () => {
    const registry = new Registry();
    const source = workerMetricsSource(registry);
    expect(source.contentType).toBe(registry.contentType);
    const first = source.render();
    const second = source.render();
    expect(sent).toStrictEqual([
      { type: 'tpx:metrics-request', id: 0 },
      { type: 'tpx:metrics-request', id: 1 },
    ]);
    fromPrimary({ type: 'tpx:metrics-response', id: 1, body: 'second 2\n' });
    fromPrimary({ type: 'tpx:metrics-request', id: 0, body: 'not an answer\n' });
    for (const other of ['tpx:metrics-response', null, undefined, 0]) fromPrimary(other);
    expect(await state(first)).toBe('pending');
    fromPrimary({ type: 'tpx:metrics-response', id: 0, body: 'first 1\n' });
    expect(await first).toBe('first 1\n');
    expect(await second).toBe('second 2\n');
  });

  it('stops listening once answered', async () => {
    const source = workerMetricsSource(new Registry());
    const listeners = process.listenerCount('message');
    const render = source.render();
    expect(process.listenerCount('message')).toBe(listeners + 1);
    fromPrimary({ type: 'tpx:metrics-response', id: 0, body: '' });
    expect(await render).toBe('');
    expect(process.listenerCount('message')).toBe(listeners);
  });

  it('fails with the primary’s reason, or says the primary sent no metrics', async () => {
    const source = workerMetricsSource(new Registry());
    const withReason = source.render();
    fromPrimary({ type: 'tpx:metrics-response', id: 0, error: 'a worker did not answer' });
    await expect(withReason).rejects.toThrow(new Error('a worker did not answer'));
    const withoutReason = source.render();
    fromPrimary({ type: 'tpx:metrics-response', id: 1, error: { code: 1 } });
    await expect(withoutReason).rejects.toThrow(new Error('no metrics from the primary process'));
  });

  it('gives up after 5 s without an answer, and ignores a late one', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const source = workerMetricsSource(new Registry());
    const listeners = process.listenerCount('message');
    const render = source.render();
    const outcome = expect(render).rejects.toThrow(
      new Error('the primary process did not answer within 5000 ms'),
    );
    await vi.advanceTimersByTimeAsync(4_999);
    expect(await state(render)).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    await outcome;
    expect(process.listenerCount('message')).toBe(listeners);
    fromPrimary({ type: 'tpx:metrics-response', id: 0, body: 'late\n' });
  });

  it('waits out its time, not failing at once, in a process with no channel to a primary', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    delete ipc.send;
    const render = workerMetricsSource(new Registry()).render();
    const outcome = expect(render).rejects.toThrow(
      new Error('the primary process did not answer within 5000 ms'),
    );
    await vi.advanceTimersByTimeAsync(5_000);
    await outcome;
  });

  it('answers within the time when the primary does', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const source = workerMetricsSource(new Registry());
    const render = source.render();
    fromPrimary({ type: 'tpx:metrics-response', id: 0, body: 'in time\n' });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await render).toBe('in time\n');
  });
});
