import diagnosticsChannel from 'node:diagnostics_channel';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TransportError, createTransport, isTransportError, type ModelTransport } from '../../src/index.js';
import { helloRequest, startScriptedServer, step, textMessage } from '../helpers/scripted-server.js';

/**
 * Every way a socket could be opened, watched at once: a listener on the would-be base URLs, undici's
 * connect channel, Node's own `net` client channel, and the process's TCP handles.
 */
let listener: Server;
let listenerUrl: string;
let acceptedConnections = 0;
const listenerSockets = new Set<Socket>();
let undiciConnects = 0;
let netClientSockets = 0;
const onUndiciConnect = () => {
  undiciConnects++;
};
const onNetClientSocket = () => {
  netClientSockets++;
};

function tcpSocketHandles(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap').length;
}

beforeAll(async () => {
  listener = createServer((socket) => {
    acceptedConnections++;
    listenerSockets.add(socket);
    socket.on('close', () => listenerSockets.delete(socket));
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  diagnosticsChannel.subscribe('undici:client:beforeConnect', onUndiciConnect);
  diagnosticsChannel.subscribe('net.client.socket', onNetClientSocket);
});

afterAll(async () => {
  diagnosticsChannel.unsubscribe('undici:client:beforeConnect', onUndiciConnect);
  diagnosticsChannel.unsubscribe('net.client.socket', onNetClientSocket);
  for (const socket of listenerSockets) socket.destroy();
  await new Promise<void>((resolve) => listener.close(() => resolve()));
});

let transport: ModelTransport;
let sleeps: number[];
beforeEach(() => {
  acceptedConnections = 0;
  undiciConnects = 0;
  netClientSockets = 0;
  sleeps = [];
  // Base URLs point at the listener, so a provider that did try to connect would be seen there.
  transport = createTransport({
    env: { ANTHROPIC_BASE_URL: listenerUrl, TPX_BASE_URL: `${listenerUrl}/v1`, TPX_MODEL: 'm' },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
});
afterEach(async () => {
  await transport.close();
});

function expectNoCredentialsError(error: unknown): void {
  expect(error).toBeInstanceOf(TransportError);
  expect(isTransportError(error)).toBe(true);
  const transportError = error as TransportError;
  expect(transportError.code).toBe('MODEL_EAUTH');
  expect(transportError.status).toBe(401);
  expect(transportError.retryable).toBe(false);
  expect(transportError.provider).toBe('none');
  expect(transportError.body).toEqual({
    type: 'error',
    error: { type: 'authentication_error', message: transportError.message },
  });
  expect(transportError.body.error.message).toContain('ANTHROPIC_API_KEY');
  expect(transportError.body.error.message).toContain('TPX_OAUTH_TOKEN');
}

async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('the none provider', () => {
  it('is selected when no credentials are present, even with base URLs set', () => {
    expect(transport.provider).toBe('none');
    expect(transport.selection.provider).toBe('none');
  });

  it('rejects send at once with MODEL_EAUTH, status 401 and a Messages authentication_error body', async () => {
    const startedAt = performance.now();
    const error = await transport.send(helloRequest()).catch((caught: unknown) => caught);
    expect(performance.now() - startedAt).toBeLessThan(100);
    expectNoCredentialsError(error);
  });

  it('does not retry the refusal', async () => {
    await expect(transport.send(helloRequest(), { maxRetries: 5 })).rejects.toMatchObject({
      code: 'MODEL_EAUTH',
    });
    expect(sleeps).toEqual([]);
  });

  it('returns a stream without throwing, and fails from the first step of the iteration', async () => {
    let iterable: AsyncIterable<unknown> | undefined;
    let thrownSynchronously: unknown;
    try {
      iterable = transport.stream(helloRequest({ stream: true }));
    } catch (error) {
      thrownSynchronously = error;
    }
    expect(thrownSynchronously).toBeUndefined();
    expect(typeof iterable?.[Symbol.asyncIterator]).toBe('function');

    const iterator = iterable![Symbol.asyncIterator]();
    const error = await iterator.next().catch((caught: unknown) => caught);
    expectNoCredentialsError(error);
  });

  it('delivers no event before the stream fails', async () => {
    const received: unknown[] = [];
    const error = await (async () => {
      for await (const event of transport.stream(helloRequest({ stream: true }))) received.push(event);
    })().catch((caught: unknown) => caught);
    expect(received).toEqual([]);
    expectNoCredentialsError(error);
  });

  it('opens no socket for send or stream: no connection, no connect attempt, no new TCP handle', async () => {
    const handlesBefore = tcpSocketHandles();
    for (let round = 0; round < 3; round++) {
      await expect(transport.send(helloRequest())).rejects.toMatchObject({ code: 'MODEL_EAUTH' });
      await expect(
        (async () => {
          for await (const event of transport.stream(helloRequest({ stream: true }))) void event;
        })(),
      ).rejects.toMatchObject({ code: 'MODEL_EAUTH' });
    }
    await settle();
    expect(acceptedConnections).toBe(0);
    expect(undiciConnects).toBe(0);
    expect(netClientSockets).toBe(0);
    expect(tcpSocketHandles()).toBe(handlesBefore);
  });
});

describe('the socket probes themselves', () => {
  it('see the connection a provider with credentials makes to the same kind of address', async () => {
    const server = await startScriptedServer([step.json(textMessage())]);
    const withKey = createTransport({
      env: { ANTHROPIC_API_KEY: 'sk-probe', ANTHROPIC_BASE_URL: server.url },
    });
    try {
      await expect(withKey.send(helloRequest())).resolves.toEqual(textMessage());
      expect(undiciConnects).toBe(1);
      expect(netClientSockets).toBe(1);
      expect(server.requests).toHaveLength(1);
    } finally {
      await withKey.close();
      await server.close();
    }
  });

  it('see a connection to the listener itself', async () => {
    const withKey = createTransport({
      env: { ANTHROPIC_API_KEY: 'sk-probe', ANTHROPIC_BASE_URL: listenerUrl },
    });
    try {
      // The listener never answers; abort as soon as the connection was made.
      const controller = new AbortController();
      const pending = withKey.send(helloRequest(), { signal: controller.signal, maxRetries: 0 });
      const deadline = Date.now() + 2_000;
      while (acceptedConnections === 0 && Date.now() < deadline) await settle();
      controller.abort();
      await expect(pending).rejects.toMatchObject({ code: 'MODEL_EABORTED' });
      expect(acceptedConnections).toBe(1);
      expect(undiciConnects).toBe(1);
    } finally {
      await withKey.close();
    }
  });
});
