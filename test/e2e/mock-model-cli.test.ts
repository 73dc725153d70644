import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** Starts `tpx mock-model` on a free port and resolves with its base URL and pid. */
async function startCliMockModel(): Promise<{ url: string; pid: number }> {
  const child = spawn(process.execPath, [CLI, 'mock-model', '--port', '0'], {
    env: { PATH: process.env['PATH'] ?? '', HOME: tmpdir() },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      output += text;
      const match = /listening on (\S+)/.exec(output);
      if (match !== null) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`tpx mock-model exited (${String(code)}): ${output}`)));
  });
  return { url, pid: child.pid! };
}

/** Resident set size of a process, in MiB (Linux). */
function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((each) => each.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1]) / 1024;
}

describe.runIf(process.platform === 'linux')('tpx mock-model over a long run', () => {
  it('does not hold the requests it served: 256 MiB of request bodies leave its memory far below that', async () => {
    const { url, pid } = await startCliMockModel();
    const filler = 'x'.repeat(256 * 1024);
    const send = async (index: number): Promise<void> => {
      const response = await fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'tpx-mock-1',
          messages: [{ role: 'user', content: `request ${index}` }],
          // Read by nobody, but part of the body a server that records requests would keep.
          metadata: { filler },
        }),
      });
      expect(response.status).toBe(200);
      const completion = (await response.json()) as { choices: { message: { content: string } }[] };
      expect(completion.choices[0]!.message.content).toContain(`request ${index}`);
    };
    // Warm up first, so the baseline is a server that has already answered requests.
    for (let index = 0; index < 20; index++) await send(index);
    const before = rssMiB(pid);
    const requests = 1024;
    const connections = 8;
    let next = 20;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < 20 + requests) await send(next++);
      }),
    );
    // Holding every body would add at least 256 MiB; a server that lets them go stays well under.
    expect(rssMiB(pid) - before).toBeLessThan(128);
  }, 60_000);
});
