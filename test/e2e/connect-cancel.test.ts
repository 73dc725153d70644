/**
 * A cancel while the connection is still being made ends the exchange at once, instead of when the
 * connection finally succeeds or its deadline passes.
 *
 * The upstream is a child process whose listening socket is never accepted from (its event loop is kept
 * busy): once the kernel's accept queue is full, new connections stay half-open, on loopback.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { TransportError } from '../../src/errors.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport } from '../../src/transport/types.js';

const NEVER_ACCEPTS = `
const server = require('node:net').createServer();
server.listen({ host: '127.0.0.1', port: 0, backlog: 1 }, () => {
  // Busy for 15 s at most, then gone: a test run that dies cannot leave it spinning.
  process.stdout.write(String(server.address().port) + '\\n', () => {
    const end = Date.now() + 15_000;
    while (Date.now() < end) {}
    process.exit(0);
  });
});
`;

let child: ChildProcess | undefined;
let fillers: Socket[] = [];
let transport: ModelTransport | undefined;

afterEach(async () => {
  // The upstream goes first: its half-open connections are then refused, and the pool can close.
  child?.kill('SIGKILL');
  for (const socket of fillers) socket.destroy();
  fillers = [];
  await transport?.close();
});

async function startNeverAccepting(): Promise<number> {
  child = spawn(process.execPath, ['-e', NEVER_ACCEPTS], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const port = Number(line.toString().trim());
  // Fill the accept queue: these complete their handshake in the kernel; later ones cannot.
  for (let index = 0; index < 4; index++) {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('error', () => {});
    fillers.push(socket);
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  return port;
}

describe('a cancel while connecting', () => {
  it('rejects with MODEL_EABORTED at once, well before the connect deadline', async () => {
    const port = await startNeverAccepting();
    transport = createTransport({
      env: {},
      tpxToken: 'connect-cancel-token',
      tpxBaseUrl: `http://127.0.0.1:${port}/v1`,
      connectTimeoutMs: 20_000,
      maxRetries: 0,
    });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 200);
    const outcome = await transport
      .send(
        { model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
        { signal: controller.signal },
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(outcome).toBeInstanceOf(TransportError);
    expect((outcome as TransportError).code).toBe('MODEL_EABORTED');
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 30_000);
});
