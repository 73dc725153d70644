/**
 * The scale-out test's process bookkeeping: whatever fails, no process it started outlives it.
 */
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ChildProcesses, startReplica } from './child-processes.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const IDLE_SCRIPT = 'setInterval(() => {}, 1000)';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('ChildProcesses', () => {
  it('stops every process it spawned, and waits for each to exit', async () => {
    const children = new ChildProcesses();
    const spawned = [1, 2, 3].map(() =>
      children.spawn(process.execPath, ['-e', IDLE_SCRIPT], { stdio: 'ignore' }),
    );
    expect(children.runningCount).toBe(3);
    await children.stopAll();
    expect(children.runningCount).toBe(0);
    for (const { child } of spawned) expect(isAlive(child.pid!)).toBe(false);
  });

  it('forgets a process once it exited by itself', async () => {
    const children = new ChildProcesses();
    const quick = children.spawn(process.execPath, ['-e', 'process.exit(3)'], { stdio: 'ignore' });
    expect(await quick.exited).toBe(3);
    expect(children.runningCount).toBe(0);
  });

  it('settles for a command that cannot be started', async () => {
    const children = new ChildProcesses();
    const missing = children.spawn('/nonexistent/tpx-no-such-binary', [], { stdio: 'ignore' });
    missing.child.on('error', () => {});
    expect(await missing.exited).toBeNull();
    await children.stopAll();
  });
});

describe('startReplica', () => {
  it('kills a replica that does not get ready in time before it rejects', async () => {
    // No process starts in 50 ms, so this one is still starting when the wait gives up, and would go
    // on to listen and serve if it were left alone.
    const port = await freePort();
    const children = new ChildProcesses();
    const spawnedPids: number[] = [];
    const spawn = children.spawn.bind(children);
    children.spawn = (...args) => {
      const tracked = spawn(...args);
      spawnedPids.push(tracked.child.pid!);
      return tracked;
    };
    await expect(
      startReplica(children, {
        cli: CLI,
        port,
        args: [],
        env: { PATH: process.env['PATH'], TPX_OAUTH_TOKEN: 'token', TPX_BASE_URL: 'http://127.0.0.1:9/v1' },
        readyTimeoutMs: 50,
      }),
    ).rejects.toThrow(`replica on port ${port} ready: not within 50 ms`);
    expect(spawnedPids).toHaveLength(1);
    expect(isAlive(spawnedPids[0]!)).toBe(false);
    expect(children.runningCount).toBe(0);
  });
});
