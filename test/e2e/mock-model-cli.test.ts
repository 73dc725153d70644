import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { rssOf } from '../../bench/harness/children.js';
import { startTpxMockModel } from './cli-process.js';

const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

const MIB = 1024 * 1024;

describe.runIf(process.platform === 'linux')('tpx mock-model over a long run', () => {
  it('does not hold the requests it served: 256 MiB of request bodies leave its memory far below that', async () => {
    const { url, child } = await startTpxMockModel();
    children.push(child);
    const pid = child.pid!;
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
    const before = rssOf(pid);
    const requests = 1024;
    const connections = 8;
    let next = 20;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < 20 + requests) await send(next++);
      }),
    );
    // Holding every body would add at least 256 MiB; a server that lets them go stays well under.
    expect((rssOf(pid) - before) / MIB).toBeLessThan(128);
  }, 60_000);
});
