/**
 * CPU time of a process, or of a process and its children (`tpx serve --workers N`: the primary and
 * its workers), read from Linux's scheduler statistics.
 *
 * `/proc/<pid>/stat` counts in clock ticks of 10 ms: over a 1.5 s load that uses 300 ms of CPU, one
 * tick is 3%, too coarse to see a cost of a few percent. `/proc/<pid>/task/<tid>/schedstat` counts the
 * time each thread ran, in nanoseconds; the sum over a process's threads is its CPU time. (A thread
 * that ends between two readings takes its time with it; Node's threads live as long as the process.)
 *
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The CPU time every live thread of `pid` has used so far, in ms; `NaN` when it cannot be read. */
export function threadCpuMs(pid: number): number {
  let totalNs = 0;
  try {
    for (const thread of readdirSync(`/proc/${pid}/task`)) {
      try {
        // "<ns on the CPU> <ns waiting to run> <time slices>"
        totalNs += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // The thread ended while we were reading; what it used is lost either way.
      }
    }
  } catch {
    return Number.NaN;
  }
  return totalNs / 1e6;
}

/**
 * The CPU time of the main thread of `pid` (whose thread id is the process id), in ms: in Node, the
 * thread that runs JavaScript; the others are the garbage collector's and the compiler's helpers and
 * libuv's pool. `NaN` when it cannot be read.
 */
export function mainThreadCpuMs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/** The pids of the processes `pid` started (Linux `/proc/<pid>/task/<tid>/children`). */
export function childPids(pid: number): number[] {
  const pids: number[] = [];
  try {
    for (const thread of readdirSync(`/proc/${pid}/task`)) {
      try {
        const list = readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').trim();
        if (list !== '') pids.push(...list.split(' ').map(Number));
      } catch {
        // The thread ended.
      }
    }
  } catch {
    // The process ended.
  }
  return pids;
}

/** The CPU time of `pid` and of the processes it started (one level: a cluster's workers), in ms. */
export function treeCpuMs(pid: number): number {
  return [pid, ...childPids(pid)].reduce((sum, each) => sum + threadCpuMs(each), 0);
}
