/**
 * How many cores this process may use: what `--workers auto` starts one worker per.
 *
 * `os.availableParallelism()` counts the CPUs the process may be scheduled on. In a container with a CPU
 * limit (Kubernetes `resources.limits.cpu`, `docker run --cpus`, systemd's `CPUQuota=`) that is still
 * every CPU of the machine: the limit is a cgroup quota of CPU time, not a set of CPUs. The libuv of
 * Node 20 (1.46) does not read the quota (libuv reads it from 1.49 on), so there a pod limited to 2 CPUs
 * on a 64-core node would start 64 workers, each with its own heap, throttled to 2 CPUs between them
 * and soon over its memory limit. Here the quota is read as well: cgroup v2's `cpu.max`, or
 * v1's `cpu.cfs_quota_us` / `cpu.cfs_period_us`, of the process's cgroup and each one above it; the
 * tightest counts, rounded down, and never below one core.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { posix } from 'node:path';

/** A file's text, or `undefined` when it cannot be read (absent, not allowed, not a file). */
export type ReadText = (path: string) => string | undefined;

function readTextOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const CGROUP_ROOT = '/sys/fs/cgroup';

/** `dir` (normalised, as `posix.join` makes it) and every directory above it up to `root`, innermost first. */
function upTo(root: string, dir: string): string[] {
  const dirs: string[] = [];
  let current = dir.replace(/(.)\/+$/, '$1');
  while (current.startsWith(root)) {
    dirs.push(current);
    if (current === root) break;
    current = posix.dirname(current);
  }
  return dirs;
}

/** The CPUs one `cpu.max` grants (`"200000 100000"` → 2), or `undefined` for none (`"max …"`, unreadable). */
function fromCpuMax(text: string | undefined): number | undefined {
  const [quota, period] = (text ?? '').trim().split(/\s+/);
  return ratio(quota, period);
}

/** quota / period for two whole numbers > 0, else `undefined` (v1's `-1`, v2's `max`, garbage). */
function ratio(quota: string | undefined, period: string | undefined): number | undefined {
  if (quota === undefined || period === undefined || !/^\d+$/.test(quota) || !/^\d+$/.test(period))
    return undefined;
  const q = Number(quota);
  const p = Number(period);
  return q > 0 && p > 0 ? q / p : undefined;
}

/**
 * The CPU quota of this process's cgroups, in CPUs (fractional), or `undefined` when none is set or
 * none can be read. `read` is for tests.
 */
export function cgroupCpuLimit(read: ReadText = readTextOrUndefined): number | undefined {
  const membership = read('/proc/self/cgroup');
  if (membership === undefined) return undefined;
  const limits: number[] = [];
  for (const line of membership.split('\n')) {
    // `hierarchy-id:controllers:path`; the path may itself hold colons.
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1).trim();
    if (line.slice(0, first) === '0' && controllers === '') {
      // cgroup v2: one hierarchy. Inside a container's cgroup namespace the path is usually `/`.
      for (const dir of upTo(CGROUP_ROOT, posix.join(CGROUP_ROOT, path))) {
        const limit = fromCpuMax(read(`${dir}/cpu.max`));
        if (limit !== undefined) limits.push(limit);
      }
    } else if (controllers.split(',').includes('cpu')) {
      // cgroup v1: the cpu controller's hierarchy, mounted under its controllers' names.
      for (const mount of new Set([`${CGROUP_ROOT}/${controllers}`, `${CGROUP_ROOT}/cpu`])) {
        for (const dir of upTo(mount, posix.join(mount, path))) {
          const limit = ratio(
            read(`${dir}/cpu.cfs_quota_us`)?.trim(),
            read(`${dir}/cpu.cfs_period_us`)?.trim(),
          );
          if (limit !== undefined) limits.push(limit);
        }
      }
    }
  }
  return limits.length === 0 ? undefined : Math.min(...limits);
}

/**
 * The cores `--workers auto` counts: the CPUs this process may run on, within its cgroups' CPU quota
 * (rounded down), and at least one. The arguments are for tests.
 */
export function usableCores(
  cpus: () => number = availableParallelism,
  limit: () => number | undefined = cgroupCpuLimit,
): number {
  const quota = limit();
  const count = quota === undefined ? cpus() : Math.min(cpus(), Math.floor(quota));
  return Math.max(1, count);
}
