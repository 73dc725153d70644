/**
 * What a `tpx serve --workers` worker needs to know about being one, without loading the supervisor
 * (and prom-client) that `workers.ts` brings: whether this process is a worker, and when its primary
 * asks it to drain.
 *
 * @module
 */
import cluster from 'node:cluster';

/** The message a primary sends each worker on SIGTERM/SIGINT. */
export const DRAIN_MESSAGE = 'tpx:drain';

/** Whether this process is a worker started by `superviseWorkers`. */
export function isWorkerProcess(): boolean {
  return cluster.isWorker;
}

/**
 * In a worker: resolves when the primary asks this worker to drain. Never resolves in a process that
 * is not a worker.
 */
export function drainRequested(): Promise<void> {
  return new Promise((resolve) => {
    if (!cluster.isWorker) return;
    const onMessage = (message: unknown) => {
      if (typeof message !== 'object' || message === null) return;
      if ((message as { type?: unknown }).type !== DRAIN_MESSAGE) return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
  });
}
