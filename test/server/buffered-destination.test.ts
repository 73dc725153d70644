/**
 * The default log destination of `tpx serve` and the CLI: lines are gathered and written a few KiB at a
 * time, a short line still goes out within about a flush interval, and a process with nothing to log
 * makes no write at all (an idle proxy must not wake up four times a second to write nothing).
 */
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait-for.js';
import {
  bufferedDestination,
  LOG_FLUSH_INTERVAL_MS,
  type BufferedDestination,
} from '../../src/server/logger.js';

let directory: string;
const opened: BufferedDestination[] = [];

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'tpx-log-'));
});

afterEach(async () => {
  for (const destination of opened.splice(0)) {
    destination.end();
    await once(destination, 'close');
  }
  await rm(directory, { recursive: true, force: true });
});

/** A buffered destination on a new file, open, with every write it makes counted. */
async function openDestination() {
  const path = join(directory, 'log.jsonl');
  const destination = bufferedDestination(path);
  opened.push(destination);
  await once(destination, 'ready');
  const writes: number[] = [];
  destination.on('write', (bytes: number) => writes.push(bytes));
  return { path, destination, writes };
}

describe('bufferedDestination', () => {
  it('makes no write while nothing is logged', async () => {
    const { writes } = await openDestination();
    await sleep(LOG_FLUSH_INTERVAL_MS * 4);
    expect(writes).toStrictEqual([]);
  });

  it('writes a short line within about a flush interval, then nothing more while idle', async () => {
    const { path, destination, writes } = await openDestination();
    const line = '{"msg":"exchange"}\n';
    destination.write(line);
    // Shorter than the buffer: it is not written at once.
    expect(writes).toStrictEqual([]);
    await waitFor(
      async () => (await readFile(path, 'utf8')) === line,
      'the line',
      LOG_FLUSH_INTERVAL_MS * 8,
      10,
    );
    const writesWhenOut = writes.length;
    await sleep(LOG_FLUSH_INTERVAL_MS * 4);
    expect(writes.length).toBe(writesWhenOut);
    expect(writes.reduce((sum, bytes) => sum + bytes, 0)).toBe(Buffer.byteLength(line));
  });

  it('writes lines that fill the buffer without waiting for the interval', async () => {
    const { path, destination } = await openDestination();
    const lines = Array.from(
      { length: 64 },
      (_, index) => `{"msg":"line ${index}","pad":"${'é'.repeat(40)}"}\n`,
    );
    for (const line of lines) destination.write(line);
    // 64 lines of about 100 bytes are past the 4 KiB buffer: most of them go out well before 250 ms.
    await waitFor(
      async () => (await readFile(path, 'utf8')).length > 0,
      'the first lines',
      LOG_FLUSH_INTERVAL_MS / 2,
      10,
    );
    await waitFor(
      async () => (await readFile(path, 'utf8')) === lines.join(''),
      'every line',
      LOG_FLUSH_INTERVAL_MS * 8,
      10,
    );
  });

  it('flushes everything at once with flushSync, and its timer then stops', async () => {
    const { path, destination, writes } = await openDestination();
    destination.write('{"msg":"last words"}\n');
    destination.flushSync();
    expect(await readFile(path, 'utf8')).toBe('{"msg":"last words"}\n');
    await sleep(LOG_FLUSH_INTERVAL_MS * 3);
    expect(writes).toStrictEqual([]);
  });

  it('stops flushing once destroyed with a line still waiting, without throwing from its timer', async () => {
    const { destination } = await openDestination();
    let failure: unknown;
    const onUncaught = (error: unknown) => {
      failure = error;
    };
    process.on('uncaughtException', onUncaught);
    try {
      destination.write('{"msg":"dropped"}\n');
      destination.destroy();
      opened.splice(opened.indexOf(destination), 1);
      await sleep(LOG_FLUSH_INTERVAL_MS * 3);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(failure).toBeUndefined();
    expect(() => destination.write('{"msg":"after"}\n')).toThrow(/destroyed/);
  });

  it('carries a pino logger’s lines', async () => {
    const { path, destination } = await openDestination();
    const logger = pino({ name: 'tpx-serve' }, destination);
    logger.info({ requestId: 'req_1' }, 'exchange');
    await waitFor(
      async () => (await readFile(path, 'utf8')).includes('"requestId":"req_1"'),
      "the logger's line",
      LOG_FLUSH_INTERVAL_MS * 8,
      10,
    );
    const record = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    expect(record).toMatchObject({ name: 'tpx-serve', requestId: 'req_1', msg: 'exchange' });
  });
});
