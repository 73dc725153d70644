/**
 * `--workers auto` counts the cores this process may use: within the CPU quota of its cgroups (v2's
 * `cpu.max`, v1's CFS quota), at any level above it, rounded down and at least one; the machine's CPUs
 * when no quota is set or none can be read.
 */
import { describe, expect, it } from 'vitest';
import { cgroupCpuLimit, usableCores } from '../../src/server/usable-cores.js';
import { parseWorkerCount } from '../../src/server/workers.js';

/** A file system of these files only. */
const files =
  (entries: Record<string, string>) =>
  (path: string): string | undefined =>
    entries[path];

const V2_IN_CONTAINER = '0::/\n';
const V1_IN_CONTAINER = '12:memory:/\n4:cpu,cpuacct:/\n1:name=systemd:/\n';

/** cgroup v1: the cpu controller's directory `dir` with this CFS quota, over a period of 100 ms. */
const cfsQuota = (quotaUs: string, membership = V1_IN_CONTAINER, dir = '/sys/fs/cgroup/cpu,cpuacct') =>
  files({
    '/proc/self/cgroup': membership,
    [`${dir}/cpu.cfs_quota_us`]: `${quotaUs}\n`,
    [`${dir}/cpu.cfs_period_us`]: '100000\n',
  });

describe('cgroupCpuLimit', () => {
  it('reads cgroup v2 cpu.max as quota over period', () => {
    const read = files({ '/proc/self/cgroup': V2_IN_CONTAINER, '/sys/fs/cgroup/cpu.max': '250000 100000\n' });
    expect(cgroupCpuLimit(read)).toBe(2.5);
  });

  it('finds no limit in a cpu.max of max, nor without a readable cpu.max or /proc/self/cgroup', () => {
    expect(
      cgroupCpuLimit(
        files({ '/proc/self/cgroup': V2_IN_CONTAINER, '/sys/fs/cgroup/cpu.max': 'max 100000\n' }),
      ),
    ).toBeUndefined();
    expect(cgroupCpuLimit(files({ '/proc/self/cgroup': V2_IN_CONTAINER }))).toBeUndefined();
    expect(cgroupCpuLimit(files({}))).toBeUndefined();
  });

  it('takes the tightest quota of the process’s cgroup and those above it (v2)', () => {
    const read = files({
      '/proc/self/cgroup': '0::/kubepods.slice/pod1/ctr\n',
      '/sys/fs/cgroup/kubepods.slice/pod1/ctr/cpu.max': 'max 100000',
      '/sys/fs/cgroup/kubepods.slice/pod1/cpu.max': '150000 100000',
      '/sys/fs/cgroup/kubepods.slice/cpu.max': '800000 100000',
      '/sys/fs/cgroup/cpu.max': 'max 100000',
    });
    expect(cgroupCpuLimit(read)).toBe(1.5);
  });

  it('reads cgroup v1 CFS quota and period of the cpu controller, where either mount has them', () => {
    expect(cgroupCpuLimit(cfsQuota('300000'))).toBe(3);
    expect(cgroupCpuLimit(cfsQuota('50000', '3:cpu:/docker/abc\n', '/sys/fs/cgroup/cpu/docker/abc'))).toBe(
      0.5,
    );
  });

  it('finds no limit in a v1 quota of -1, or in text that is not two whole numbers', () => {
    expect(cgroupCpuLimit(cfsQuota('-1'))).toBeUndefined();
    for (const text of ['', '0 100000', '100000 0', '1.5 1', 'abc def', '200000']) {
      const read = files({ '/proc/self/cgroup': V2_IN_CONTAINER, '/sys/fs/cgroup/cpu.max': text });
      expect([text, cgroupCpuLimit(read)]).toStrictEqual([text, undefined]);
    }
  });

  it('does not leave the cgroup file system for a path that climbs out of it', () => {
    const read = files({ '/proc/self/cgroup': '0::/../../../etc\n', '/etc/cpu.max': '100000 100000' });
    expect(cgroupCpuLimit(read)).toBeUndefined();
  });
});

describe('usableCores and --workers auto', () => {
  it('counts the CPUs when there is no quota, and the quota rounded down when it is tighter', () => {
    expect(
      usableCores(
        () => 64,
        () => undefined,
      ),
    ).toBe(64);
    expect(
      usableCores(
        () => 64,
        () => 2,
      ),
    ).toBe(2);
    expect(
      usableCores(
        () => 64,
        () => 2.9,
      ),
    ).toBe(2);
    expect(
      usableCores(
        () => 4,
        () => 16,
      ),
    ).toBe(4);
  });

  it('never counts fewer than one core', () => {
    expect(
      usableCores(
        () => 8,
        () => 0.5,
      ),
    ).toBe(1);
    expect(
      usableCores(
        () => 0,
        () => undefined,
      ),
    ).toBe(1);
  });

  it('starts as many workers as this process may use', () => {
    expect(parseWorkerCount('auto')).toBe(usableCores());
  });
});
