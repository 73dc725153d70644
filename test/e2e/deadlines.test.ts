import { createHook } from 'node:async_hooks';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import {
  TransportError,
  createTransport,
  type ExchangeOptions,
  type MessagesRequest,
  type MessageStreamEvent,
  type ModelTransport,
  type TransportOptions,
} from '../../src/index.js';
import {
  anthropicSse,
  helloRequest,
  messageStartEvent,
  startScriptedServer,
  step,
  textMessage,
  textStreamEvents,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

// ---------------------------------------------------------------------------------------------------
// Leak probe. Two views: the TCP sockets `process.getActiveResourcesInfo()` lists (compared with the
// count before the test), and every socket and referenced timer created *during* the test, tracked by
// an async hook (a plain count of timers is too noisy: the test runner's own timers come and go).

function openTcpSockets(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap').length;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface LeakProbe {
  /** Sockets and referenced timers created since the probe started that are still alive. */
  live(): string[];
  /** Leaves one of the probe's own timers out of `live()`. */
  ignore(timer: NodeJS.Timeout): void;
  stop(): void;
}

function startLeakProbe(): LeakProbe {
  const alive = new Map<number, { type: string; resource: unknown }>();
  const hook = createHook({
    init(asyncId, type, _triggerAsyncId, resource) {
      if (type === 'Timeout' || type === 'TCPWRAP') alive.set(asyncId, { type, resource });
    },
    destroy(asyncId) {
      alive.delete(asyncId);
    },
  }).enable();
  return {
    live() {
      const names: string[] = [];
      for (const { type, resource } of alive.values()) {
        // An unreferenced timer (undici's clock, keep-alive timers) cannot hold the process open.
        if (type === 'Timeout' && !(resource as NodeJS.Timeout).hasRef()) continue;
        names.push(type);
      }
      return names;
    },
    ignore(timer) {
      // A timer converts to its async id.
      alive.delete(Number(timer));
    },
    stop() {
      hook.disable();
    },
  };
}

/** Waits up to `settleMs` for the probe to see nothing alive and the socket count to fall back. */
async function settle(
  probe: LeakProbe,
  socketsBefore: number,
  settleMs = 1_000,
): Promise<{ live: string[]; sockets: number }> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    const state = { live: probe.live(), sockets: openTcpSockets() };
    if ((state.live.length === 0 && state.sockets <= socketsBefore) || Date.now() >= deadline) return state;
    // The settle's own timer has fired, but its destroy hook may come later: leave it out.
    await new Promise<void>((resolve) => probe.ignore(setTimeout(resolve, 10)));
  }
}

// ---------------------------------------------------------------------------------------------------
// A listener that never accepts: its accept queue is filled, so the kernel drops further SYNs and a
// connect attempt hangs, which is the only way to make a connect deadline pass on loopback.

const UNACCEPTING_LISTENER = `
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const server = net.createServer(() => {});
server.listen({ host: '127.0.0.1', port: 0, backlog: 1 }, () => {
  parentPort.postMessage(server.address().port);
  // Block this thread's event loop: nothing is accepted from now on.
  setImmediate(() => Atomics.wait(new Int32Array(workerData), 0, 0));
});
`;

async function startUnacceptingListener(): Promise<{ url: string; close(): Promise<void> }> {
  const shared = new SharedArrayBuffer(4);
  const worker = new Worker(UNACCEPTING_LISTENER, { eval: true, workerData: shared });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', (value: number) => resolve(value));
    worker.once('error', reject);
  });
  await pause(20);
  const fillers: Socket[] = [];
  let saturated = false;
  for (let attempt = 0; attempt < 16 && !saturated; attempt++) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    fillers.push(socket);
    const connected = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 150);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    saturated = !connected;
  }
  const close = async () => {
    for (const socket of fillers) socket.destroy();
    const flag = new Int32Array(shared);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    await worker.terminate();
  };
  if (!saturated) {
    await close();
    throw new Error('could not fill the accept queue of the unaccepting listener');
  }
  return { url: `http://127.0.0.1:${port}`, close };
}

// ---------------------------------------------------------------------------------------------------

let server: ScriptedServer;
let transport: ModelTransport | undefined;

async function closeTransport(): Promise<void> {
  await transport?.close();
}

/**
 * A test that gets a fresh scripted server, and afterwards — with its transport and server closed, after
 * a short settle — must leave no socket or referenced timer it created open.
 */
function leakFreeIt(name: string, body: () => Promise<void>): void {
  it(name, async () => {
    const socketsBefore = openTcpSockets();
    const probe = startLeakProbe();
    try {
      server = await startScriptedServer();
      transport = undefined;
      try {
        await body();
      } finally {
        await closeTransport();
        await server.close();
      }
      const left = await settle(probe, socketsBefore);
      expect(left.live).toEqual([]);
      expect(left.sockets).toBeLessThanOrEqual(socketsBefore);
    } finally {
      probe.stop();
    }
  });
}

function useTransport(options: TransportOptions = {}, baseUrl = server.url): ModelTransport {
  const created = createTransport({
    env: { ANTHROPIC_API_KEY: 'sk-deadlines', ANTHROPIC_BASE_URL: baseUrl },
    maxRetries: 0,
    ...options,
  });
  transport = created;
  return created;
}

function active(): ModelTransport {
  if (transport === undefined) throw new Error('call useTransport() first');
  return transport;
}

async function sendError(request: MessagesRequest, options?: ExchangeOptions): Promise<TransportError> {
  const error = await active()
    .send(request, options)
    .then(
      () => undefined,
      (caught: unknown) => caught,
    );
  expect(error).toBeInstanceOf(TransportError);
  return error as TransportError;
}

async function drain(
  request: MessagesRequest,
  options?: ExchangeOptions,
  onEvent?: (event: MessageStreamEvent) => void,
): Promise<{ events: MessageStreamEvent[]; error: TransportError | undefined }> {
  const events: MessageStreamEvent[] = [];
  try {
    for await (const event of active().stream(request, options)) {
      events.push(event);
      onEvent?.(event);
    }
  } catch (error) {
    expect(error).toBeInstanceOf(TransportError);
    return { events, error: error as TransportError };
  }
  return { events, error: undefined };
}

async function timed<T>(action: () => Promise<T>): Promise<{ value: T; elapsedMs: number }> {
  const startedAt = performance.now();
  const value = await action();
  return { value, elapsedMs: performance.now() - startedAt };
}

async function waitForRequests(count: number): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (server.requests.length < count && Date.now() < deadline) await pause(5);
  expect(server.requests.length).toBeGreaterThanOrEqual(count);
}

/**
 * Checks that a per-attempt deadline fired on the transport's own timer. undici keeps the first-byte and
 * idle deadlines too, as a backstop on a coarse clock (about a second late); when the backstop fires
 * instead, its `HeadersTimeoutError` or `BodyTimeoutError` is the error's `cause`. So a removed or broken
 * timer fails here, rather than passing a little later on undici's.
 */
function expectOwnTimer(error: TransportError | undefined, deadline: 'first-byte' | 'idle'): void {
  expect(error?.code).toBe('MODEL_ETIMEOUT');
  expect(error?.deadline).toBe(deadline);
  expect(error?.cause).toBeUndefined();
}

describe('the first-byte deadline', () => {
  leakFreeIt(
    'fails a send whose response headers never come with MODEL_ETIMEOUT naming first-byte',
    async () => {
      useTransport({ firstByteTimeoutMs: 150 });
      server.push(step.noHeaders());
      const { value: error, elapsedMs } = await timed(() => sendError(helloRequest()));
      expect(error.code).toBe('MODEL_ETIMEOUT');
      expect(error.deadline).toBe('first-byte');
      expect(error.status).toBe(504);
      expect(error.body.error.type).toBe('timeout_error');
      expect(error.message).toMatch(/first-byte/);
      expect(error.message).toContain('150 ms');
      expect(elapsedMs).toBeGreaterThanOrEqual(120);
      expect(elapsedMs).toBeLessThan(2_000);
      expect((await server.settled(0)).aborted).toBe(true);
      expectOwnTimer(error, 'first-byte');
    },
  );

  leakFreeIt(
    'fails a stream whose response headers never come with MODEL_ETIMEOUT naming first-byte',
    async () => {
      useTransport({ firstByteTimeoutMs: 150 });
      server.push(step.noHeaders());
      const { events, error } = await drain(helloRequest({ stream: true }));
      expect(events).toEqual([]);
      expectOwnTimer(error, 'first-byte');
    },
  );

  leakFreeIt('takes the per-exchange first-byte deadline over the transport default', async () => {
    useTransport({ firstByteTimeoutMs: 10_000 });
    server.push(step.noHeaders());
    const { value: error, elapsedMs } = await timed(() =>
      sendError(helloRequest(), { firstByteTimeoutMs: 100 }),
    );
    expectOwnTimer(error, 'first-byte');
    expect(error.message).toContain('100 ms');
    expect(elapsedMs).toBeLessThan(2_000);
  });

  leakFreeIt('retries an attempt that timed out waiting for headers', async () => {
    useTransport({ firstByteTimeoutMs: 600, maxRetries: 1, sleep: async () => undefined });
    server.push(step.noHeaders(), step.json(textMessage()));
    await expect(active().send(helloRequest())).resolves.toEqual(textMessage());
    expect(server.requests).toHaveLength(2);
  });
});

describe('the idle deadline', () => {
  leakFreeIt(
    'fails a stream that goes silent mid-way with MODEL_ETIMEOUT naming idle, after the events before',
    async () => {
      useTransport({ idleTimeoutMs: 150 });
      server.push(step.sse(anthropicSse([messageStartEvent()]), { then: 'hang' }));
      const { value: result, elapsedMs } = await timed(() => drain(helloRequest({ stream: true })));
      expect(result.events).toEqual([messageStartEvent()]);
      expect(result.error?.code).toBe('MODEL_ETIMEOUT');
      expect(result.error?.deadline).toBe('idle');
      expect(result.error?.message).toMatch(/idle/);
      expectOwnTimer(result.error, 'idle');
      expect(elapsedMs).toBeLessThan(2_000);
      expect(server.requests).toHaveLength(1);
    },
  );

  leakFreeIt(
    'fails a send whose body never comes after the headers with MODEL_ETIMEOUT naming idle',
    async () => {
      useTransport({ idleTimeoutMs: 150 });
      server.push(step.hangAfterHeaders());
      const error = await sendError(helloRequest());
      expectOwnTimer(error, 'idle');
    },
  );

  leakFreeIt('lets a slow stream through when every gap is shorter than the idle deadline', async () => {
    useTransport({ idleTimeoutMs: 300 });
    server.push(step.sse(anthropicSse(textStreamEvents(['a', 'b', 'c'])), { frameDelayMs: 60 }));
    const { events, error } = await drain(helloRequest({ stream: true }));
    expect(error).toBeUndefined();
    expect(events).toEqual(textStreamEvents(['a', 'b', 'c']));
  });
});

describe('the total deadline', () => {
  leakFreeIt('fails a stream that trickles bytes forever with MODEL_ETIMEOUT naming total', async () => {
    useTransport({ timeoutMs: 300, idleTimeoutMs: 5_000, firstByteTimeoutMs: 5_000 });
    server.push(step.trickle({ chunk: ': still here\n\n', intervalMs: 20 }));
    const { value: result, elapsedMs } = await timed(() => drain(helloRequest({ stream: true })));
    expect(result.events).toEqual([]);
    expect(result.error?.code).toBe('MODEL_ETIMEOUT');
    expect(result.error?.deadline).toBe('total');
    expect(result.error?.message).toMatch(/total/);
    expect(result.error?.message).toContain('300 ms');
    expect(elapsedMs).toBeGreaterThanOrEqual(250);
    expect(elapsedMs).toBeLessThan(2_000);
    expect((await server.settled(0)).aborted).toBe(true);
  });

  leakFreeIt('fails a send whose body trickles forever with MODEL_ETIMEOUT naming total', async () => {
    useTransport({ idleTimeoutMs: 5_000 });
    server.push(
      step.trickle({ chunk: ' ', intervalMs: 20, headers: { 'content-type': 'application/json' } }),
    );
    const error = await sendError(helloRequest(), { timeoutMs: 250 });
    expect(error.code).toBe('MODEL_ETIMEOUT');
    expect(error.deadline).toBe('total');
  });

  leakFreeIt('does not wait for a retry that would end after the total deadline', async () => {
    useTransport({ timeoutMs: 500, maxRetries: 3 });
    server.push(
      step.json(
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        { status: 529, headers: { 'retry-after': '2' } },
      ),
    );
    const { value: error, elapsedMs } = await timed(() => sendError(helloRequest()));
    expect(error.code).toBe('MODEL_EHTTP');
    expect(error.status).toBe(529);
    expect(server.requests).toHaveLength(1);
    expect(elapsedMs).toBeLessThan(400);
  });
});

describe('the connect deadline', () => {
  leakFreeIt('fails with MODEL_ETIMEOUT naming connect when the listener never accepts', async () => {
    const listener = await startUnacceptingListener();
    try {
      useTransport({ connectTimeoutMs: 150 }, listener.url);
      const { value: error, elapsedMs } = await timed(() => sendError(helloRequest()));
      expect(error.code).toBe('MODEL_ETIMEOUT');
      expect(error.deadline).toBe('connect');
      expect(error.message).toMatch(/connect/);
      expect(elapsedMs).toBeGreaterThanOrEqual(120);
      expect(elapsedMs).toBeLessThan(2_000);
    } finally {
      await active().close();
      await listener.close();
    }
  });

  leakFreeIt(
    'names the connect deadline, not the first-byte one, when connecting outlasts the first-byte deadline',
    async () => {
      const listener = await startUnacceptingListener();
      try {
        // The first-byte deadline is the shorter: counted from the start, it would fire first.
        useTransport({ connectTimeoutMs: 600, firstByteTimeoutMs: 100 }, listener.url);
        const { value: error, elapsedMs } = await timed(() => sendError(helloRequest()));
        expect(error.code).toBe('MODEL_ETIMEOUT');
        expect(error.deadline).toBe('connect');
        expect(error.message).toMatch(/could not connect .* within 600 ms \(connect deadline\)/);
        expect(elapsedMs).toBeGreaterThanOrEqual(550);
        const { events, error: streamError } = await drain(helloRequest({ stream: true }));
        expect(events).toEqual([]);
        expect(streamError?.deadline).toBe('connect');
      } finally {
        await active().close();
        await listener.close();
      }
    },
  );

  leakFreeIt(
    'counts the first-byte deadline from the request being written, once the connection is made',
    async () => {
      // A connect deadline far longer than the first-byte one changes nothing for a server that accepts
      // at once and then never answers: the first-byte deadline fires, and says so.
      useTransport({ connectTimeoutMs: 5_000, firstByteTimeoutMs: 150 });
      server.push(step.noHeaders());
      const { value: error, elapsedMs } = await timed(() => sendError(helloRequest()));
      expectOwnTimer(error, 'first-byte');
      expect(error.message).toMatch(/sent no response headers within 150 ms \(first-byte deadline\)/);
      expect(elapsedMs).toBeLessThan(2_000);
    },
  );

  leakFreeIt('fails quickly with MODEL_ETRANSPORT when the connection is refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    useTransport({}, `http://127.0.0.1:${port}`);
    const { value: error, elapsedMs } = await timed(() => sendError(helloRequest()));
    expect(error.code).toBe('MODEL_ETRANSPORT');
    expect(error.status).toBe(502);
    expect(error.message).toContain('ECONNREFUSED');
    expect(elapsedMs).toBeLessThan(1_000);
  });
});

describe('cancellation', () => {
  leakFreeIt(
    'fails a send whose signal is already aborted with MODEL_EABORTED and sends nothing',
    async () => {
      useTransport();
      server.push(step.json(textMessage()));
      const controller = new AbortController();
      controller.abort();
      const error = await sendError(helloRequest(), { signal: controller.signal });
      expect(error.code).toBe('MODEL_EABORTED');
      expect(error.status).toBe(499);
      await pause(30);
      expect(server.requests).toHaveLength(0);
    },
  );

  leakFreeIt(
    'fails a stream whose signal is already aborted with MODEL_EABORTED and sends nothing',
    async () => {
      useTransport();
      server.push(step.sse(anthropicSse(textStreamEvents())));
      const controller = new AbortController();
      controller.abort();
      const { events, error } = await drain(helloRequest({ stream: true }), { signal: controller.signal });
      expect(events).toEqual([]);
      expect(error?.code).toBe('MODEL_EABORTED');
      await pause(30);
      expect(server.requests).toHaveLength(0);
    },
  );

  leakFreeIt('aborts a send waiting for headers, and the server sees the client leave', async () => {
    useTransport();
    server.push(step.noHeaders());
    const controller = new AbortController();
    const pending = sendError(helloRequest(), { signal: controller.signal });
    await waitForRequests(1);
    controller.abort();
    const error = await pending;
    expect(error.code).toBe('MODEL_EABORTED');
    expect((await server.settled(0)).aborted).toBe(true);
  });

  leakFreeIt(
    'aborts a stream mid-way with MODEL_EABORTED, and the server sees the client leave',
    async () => {
      useTransport();
      server.push(step.sse(anthropicSse([messageStartEvent()]), { then: 'hang' }));
      const controller = new AbortController();
      const { events, error } = await drain(
        helloRequest({ stream: true }),
        { signal: controller.signal },
        () => controller.abort(),
      );
      expect(events).toEqual([messageStartEvent()]);
      expect(error?.code).toBe('MODEL_EABORTED');
      expect((await server.settled(0)).aborted).toBe(true);
    },
  );

  leakFreeIt('aborts during the wait before a retry without sending the retry', async () => {
    useTransport({ maxRetries: 2 });
    server.push(
      step.json(
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        { status: 529, headers: { 'retry-after': '5' } },
      ),
      step.json(textMessage()),
    );
    const controller = new AbortController();
    const pending = sendError(helloRequest(), { signal: controller.signal });
    await waitForRequests(1);
    await pause(30);
    const { value: error, elapsedMs } = await timed(() => {
      controller.abort();
      return pending;
    });
    expect(error.code).toBe('MODEL_EABORTED');
    expect(elapsedMs).toBeLessThan(500);
    expect(server.requests).toHaveLength(1);
  });

  leakFreeIt('aborts the upstream request when the consumer breaks out of the loop', async () => {
    useTransport();
    server.push(step.sse(anthropicSse(textStreamEvents().slice(0, 3)), { then: 'hang' }));
    const received: MessageStreamEvent[] = [];
    const { elapsedMs } = await timed(async () => {
      for await (const event of active().stream(helloRequest({ stream: true }))) {
        received.push(event);
        break;
      }
    });
    expect(received).toEqual([messageStartEvent()]);
    expect(elapsedMs).toBeLessThan(1_000);
    expect((await server.settled(0)).aborted).toBe(true);
  });

  leakFreeIt('leaves the connection to the server as it found it once a stream ended normally', async () => {
    useTransport();
    server.push(step.sse(anthropicSse(textStreamEvents())));
    const { events, error } = await drain(helloRequest({ stream: true }));
    expect(error).toBeUndefined();
    expect(events).toHaveLength(textStreamEvents().length);
    expect((await server.settled(0)).aborted).toBe(false);
  });
});

describe('the response size limit', () => {
  leakFreeIt('fails a send whose body grows past maxResponseBytes with MODEL_ETOOBIG', async () => {
    useTransport({ maxResponseBytes: 64 * 1024 });
    server.push(step.oversize(512 * 1024));
    const error = await sendError(helloRequest());
    expect(error.code).toBe('MODEL_ETOOBIG');
    expect(error.message).toContain('65536');
    expect(error.message).toMatch(/maxResponseBytes/);
  });

  leakFreeIt(
    'fails a send whose content-length is past maxResponseBytes with MODEL_ETOOBIG, before reading it',
    async () => {
      useTransport({ maxResponseBytes: 64 * 1024 });
      server.push(step.oversize(8 * 1024 * 1024, { declareLength: true }));
      const { value: error, elapsedMs } = await timed(() => sendError(helloRequest()));
      expect(error.code).toBe('MODEL_ETOOBIG');
      expect(elapsedMs).toBeLessThan(1_000);
    },
  );

  leakFreeIt(
    'fails a stream that grows past maxResponseBytes with MODEL_ETOOBIG, after the events within the limit',
    async () => {
      useTransport({ maxResponseBytes: 64 * 1024 });
      const [start, blockStart] = textStreamEvents();
      const deltas = Array.from({ length: 64 }, () => ({
        type: 'content_block_delta' as const,
        index: 0,
        delta: { type: 'text_delta' as const, text: 'y'.repeat(4_000) },
      }));
      server.push(step.sse(anthropicSse([start!, blockStart!, ...deltas]), { frameDelayMs: 1 }));
      const { events, error } = await drain(helloRequest({ stream: true }));
      expect(error?.code).toBe('MODEL_ETOOBIG');
      expect(events.slice(0, 2)).toEqual([start, blockStart]);
      expect(events.length).toBeGreaterThan(2);
      expect(events.length).toBeLessThan(2 + 17);
    },
  );

  leakFreeIt('fails a stream with one event larger than maxResponseBytes with MODEL_ETOOBIG', async () => {
    useTransport({ maxResponseBytes: 16 * 1024 });
    server.push(
      step.oversize(256 * 1024, {
        headers: { 'content-type': 'text/event-stream' },
        chunk: 'data: ' + 'z'.repeat(1_000),
      }),
    );
    const { events, error } = await drain(helloRequest({ stream: true }));
    expect(events).toEqual([]);
    expect(error?.code).toBe('MODEL_ETOOBIG');
  });
});

describe('broken connections', () => {
  leakFreeIt(
    'ends a send whose body is shorter than its content-length in a typed error, without hanging',
    async () => {
      useTransport({ idleTimeoutMs: 5_000 });
      server.push(step.lyingLength(4_096, JSON.stringify(textMessage()).slice(0, 40)));
      const { value: error, elapsedMs } = await timed(() => sendError(helloRequest()));
      expect(['MODEL_EPROTO', 'MODEL_ETRANSPORT']).toContain(error.code);
      expect(elapsedMs).toBeLessThan(2_000);
    },
  );

  leakFreeIt('ends a send whose connection is reset mid-body in MODEL_ETRANSPORT', async () => {
    useTransport();
    server.push(step.reset('mid-body'));
    const error = await sendError(helloRequest());
    expect(error.code).toBe('MODEL_ETRANSPORT');
    expect(server.requests).toHaveLength(1);
  });

  leakFreeIt(
    'ends a stream whose connection is reset after the headers in a typed error, with no event',
    async () => {
      useTransport();
      server.push(step.reset('after-headers', { headers: { 'content-type': 'text/event-stream' } }));
      const { events, error } = await drain(helloRequest({ stream: true }));
      expect(events).toEqual([]);
      expect(['MODEL_ETRANSPORT', 'MODEL_EPROTO']).toContain(error?.code);
    },
  );
});

describe('the leak probe', () => {
  leakFreeIt(
    'sees a socket and a referenced timer left open, and stops seeing them once closed',
    async () => {
      const socketsBefore = openTcpSockets();
      const probe = startLeakProbe();
      try {
        const socket = connect(server.port, '127.0.0.1');
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
        const timer = setTimeout(() => undefined, 10_000);
        const unreferenced = setTimeout(() => undefined, 10_000).unref();
        // Both ends live in this process: the client socket and the one the server accepted.
        expect(openTcpSockets()).toBe(socketsBefore + 2);
        expect(probe.live().sort()).toEqual(['TCPWRAP', 'TCPWRAP', 'Timeout']);
        socket.destroy();
        clearTimeout(timer);
        clearTimeout(unreferenced);
        const left = await settle(probe, socketsBefore);
        expect(left).toEqual({ live: [], sockets: socketsBefore });
      } finally {
        probe.stop();
      }
    },
  );
});
