/**
 * A scripted HTTP server on `127.0.0.1` (ephemeral port) for end-to-end tests of the transport. It
 * records every request it receives and answers each with the next step of a script: a JSON or HTML
 * body, an SSE stream with per-frame delays, or one of the faults a real upstream produces (hanging,
 * resetting, trickling, oversized or lying responses). `close()` destroys every socket it still holds,
 * so a test that closes it leaves no handle behind.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the server saw it. */
export interface RecordedRequest {
  /** 0 for the first request the server received, 1 for the second, … */
  index: number;
  method: string;
  /** Path and query string, e.g. `/v1/messages?beta=true`. */
  url: string;
  /** Header names lower-cased; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The request body exactly as received, decoded as UTF-8. */
  bodyText: string;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  json: unknown;
  /** `Date.now()` when the request body had been read. */
  receivedAtMs: number;
  /** True when the client went away before the server finished its response. */
  aborted: boolean;
}

/** What a handler step is given to answer one request by hand. */
export interface HandlerContext {
  request: IncomingMessage;
  response: ServerResponse;
  record: RecordedRequest;
  socket: Socket;
}

type Headers = Record<string, string>;

/** How the server answers one request. Build these with {@link step}. */
export type Step =
  | { kind: 'json'; status: number; headers: Headers; body: unknown }
  | { kind: 'text'; status: number; headers: Headers; body: string }
  | {
      kind: 'sse';
      status: number;
      headers: Headers;
      frames: readonly string[];
      frameDelayMs: number | readonly number[];
      then: 'end' | 'hang' | 'reset';
    }
  | { kind: 'hang-after-headers'; status: number; headers: Headers }
  | { kind: 'no-headers' }
  | {
      kind: 'reset';
      phase: 'before-headers' | 'after-headers' | 'mid-body';
      status: number;
      headers: Headers;
      body: string;
    }
  | { kind: 'trickle'; status: number; headers: Headers; chunk: string; intervalMs: number }
  | {
      kind: 'oversize';
      status: number;
      headers: Headers;
      bytes: number;
      chunk: string;
      declareLength: boolean;
    }
  | { kind: 'lying-length'; status: number; headers: Headers; declaredLength: number; body: string }
  | { kind: 'handler'; handle: (context: HandlerContext) => void | Promise<void> };

const SSE_HEADERS: Headers = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
};
const JSON_HEADERS: Headers = { 'content-type': 'application/json' };

/** Lets bytes already written reach the client before the socket is reset (a reset drops unread data). */
const RESET_GRACE_MS = 25;

/** Builders for script steps. */
export const step = {
  /** Answers `body` as JSON. */
  json(body: unknown, options: { status?: number; headers?: Headers } = {}): Step {
    return {
      kind: 'json',
      status: options.status ?? 200,
      headers: { ...JSON_HEADERS, ...options.headers },
      body,
    };
  },
  /** Answers a text body, e.g. the HTML error page of a load balancer. */
  text(
    status: number,
    body: string,
    headers: Headers = { 'content-type': 'text/html; charset=utf-8' },
  ): Step {
    return { kind: 'text', status, headers, body };
  },
  /**
   * Streams SSE frames. `frameDelayMs` is waited before each frame (one number for all, or one per
   * frame); after the last frame the response ends, hangs open forever, or the socket is reset.
   */
  sse(
    frames: readonly string[],
    options: {
      status?: number;
      headers?: Headers;
      frameDelayMs?: number | readonly number[];
      then?: 'end' | 'hang' | 'reset';
    } = {},
  ): Step {
    return {
      kind: 'sse',
      status: options.status ?? 200,
      headers: { ...SSE_HEADERS, ...options.headers },
      frames,
      frameDelayMs: options.frameDelayMs ?? 0,
      then: options.then ?? 'end',
    };
  },
  /** Sends the status line and headers, then never a byte of body. */
  hangAfterHeaders(status = 200, headers: Headers = JSON_HEADERS): Step {
    return { kind: 'hang-after-headers', status, headers };
  },
  /** Reads the request and never answers at all. */
  noHeaders(): Step {
    return { kind: 'no-headers' };
  },
  /** Resets the TCP connection before the headers, after them, or part way through the body. */
  reset(
    phase: 'before-headers' | 'after-headers' | 'mid-body',
    options: { status?: number; headers?: Headers; body?: string } = {},
  ): Step {
    return {
      kind: 'reset',
      phase,
      status: options.status ?? 200,
      headers: options.headers ?? JSON_HEADERS,
      body: options.body ?? '{"id":"msg_partial","type":"mess',
    };
  },
  /** Sends headers, then `chunk` every `intervalMs`, forever. */
  trickle(options: { chunk?: string; intervalMs?: number; status?: number; headers?: Headers } = {}): Step {
    return {
      kind: 'trickle',
      status: options.status ?? 200,
      headers: options.headers ?? SSE_HEADERS,
      chunk: options.chunk ?? ': keep-alive\n\n',
      intervalMs: options.intervalMs ?? 20,
    };
  },
  /** Sends a body of `bytes` bytes made of repeated `chunk`, with or without a matching content-length. */
  oversize(
    bytes: number,
    options: { chunk?: string; declareLength?: boolean; status?: number; headers?: Headers } = {},
  ): Step {
    return {
      kind: 'oversize',
      status: options.status ?? 200,
      headers: options.headers ?? JSON_HEADERS,
      bytes,
      chunk: options.chunk ?? 'x'.repeat(1024),
      declareLength: options.declareLength ?? false,
    };
  },
  /** Declares `declaredLength` bytes of body, sends `body` instead, then closes the connection. */
  lyingLength(
    declaredLength: number,
    body: string,
    options: { status?: number; headers?: Headers } = {},
  ): Step {
    return {
      kind: 'lying-length',
      status: options.status ?? 200,
      headers: options.headers ?? JSON_HEADERS,
      declaredLength,
      body,
    };
  },
  /** Answers by hand. */
  handle(handle: (context: HandlerContext) => void | Promise<void>): Step {
    return { kind: 'handler', handle };
  },
};

/** A running scripted server. */
export interface ScriptedServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Every request received so far, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Appends steps to the script. */
  push(...steps: Step[]): void;
  /** Resolves once request `index` has arrived and its response is over (finished, reset or abandoned). */
  settled(index: number, timeoutMs?: number): Promise<RecordedRequest>;
  /** Destroys every open socket, clears every pending timer, and stops listening. */
  close(): Promise<void>;
}

/** Answer used once the script has run out: a status no client retries, with a message saying why. */
function exhausted(index: number): Step {
  return step.json(
    {
      type: 'error',
      error: { type: 'invalid_request_error', message: `scripted server: no step left for request ${index}` },
    },
    { status: 418 },
  );
}

function flattenHeaders(raw: IncomingMessage['headers']): Headers {
  const headers: Headers = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Starts a scripted server. `script` is either a list of steps, used one per request in order, or a
 * function choosing the step for each request.
 */
export async function startScriptedServer(
  script: readonly Step[] | ((record: RecordedRequest) => Step) = [],
): Promise<ScriptedServer> {
  const queue: Step[] = typeof script === 'function' ? [] : [...script];
  const choose = typeof script === 'function' ? script : undefined;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const settledPromises = new Map<number, Promise<void>>();
  const settleResolvers = new Map<number, () => void>();
  let closing = false;

  function settledPromise(index: number): Promise<void> {
    let promise = settledPromises.get(index);
    if (promise === undefined) {
      promise = new Promise<void>((resolve) => settleResolvers.set(index, resolve));
      settledPromises.set(index, promise);
    }
    return promise;
  }

  function later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      action();
    }, ms);
    timers.add(timer);
  }

  function every(ms: number, action: () => void): NodeJS.Timeout {
    const timer = setInterval(action, ms);
    timers.add(timer);
    return timer;
  }

  const server = createServer((request, response) => {
    const socket = request.socket;
    const chunks: Buffer[] = [];
    const index = requests.length;
    const record: RecordedRequest = {
      index,
      method: request.method ?? '',
      url: request.url ?? '',
      headers: flattenHeaders(request.headers),
      bodyText: '',
      json: undefined,
      receivedAtMs: 0,
      aborted: false,
    };
    requests.push(record);
    void settledPromise(index);
    // The server itself resets or closes some connections on purpose; only a client leaving counts.
    let closedByServer = false;
    const resetSocket = () => {
      closedByServer = true;
      socket.resetAndDestroy();
    };
    response.on('close', () => {
      if (!response.writableFinished && !closedByServer && !closing) record.aborted = true;
      settleResolvers.get(index)?.();
    });

    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      record.bodyText = Buffer.concat(chunks).toString('utf8');
      record.json = parseJson(record.bodyText);
      record.receivedAtMs = Date.now();
      const next = choose !== undefined ? choose(record) : (queue.shift() ?? exhausted(index));
      void answer(next, { request, response, record, socket }, resetSocket, () => {
        closedByServer = true;
      });
    });
  });

  async function answer(
    next: Step,
    context: HandlerContext,
    resetSocket: () => void,
    markServerClose: () => void,
  ): Promise<void> {
    const { response, socket } = context;
    const alive = () => !response.destroyed && !socket.destroyed && !closing;
    switch (next.kind) {
      case 'json':
        response.writeHead(next.status, next.headers).end(JSON.stringify(next.body));
        return;
      case 'text':
        response.writeHead(next.status, next.headers).end(next.body);
        return;
      case 'sse': {
        response.writeHead(next.status, next.headers);
        response.flushHeaders();
        const delays = next.frameDelayMs;
        for (let frame = 0; frame < next.frames.length; frame++) {
          const wait = typeof delays === 'number' ? delays : (delays[frame] ?? 0);
          if (wait > 0) await new Promise<void>((resolve) => later(wait, resolve));
          if (!alive()) return;
          response.write(next.frames[frame]);
        }
        if (next.then === 'end') response.end();
        else if (next.then === 'reset') later(RESET_GRACE_MS, () => alive() && resetSocket());
        return;
      }
      case 'hang-after-headers':
        response.writeHead(next.status, next.headers);
        response.flushHeaders();
        return;
      case 'no-headers':
        return;
      case 'reset':
        if (next.phase === 'before-headers') {
          resetSocket();
          return;
        }
        response.writeHead(next.status, next.headers);
        response.flushHeaders();
        if (next.phase === 'mid-body') response.write(next.body);
        later(RESET_GRACE_MS, () => alive() && resetSocket());
        return;
      case 'trickle': {
        response.writeHead(next.status, next.headers);
        response.flushHeaders();
        const timer = every(next.intervalMs, () => {
          if (alive()) response.write(next.chunk);
          else {
            clearInterval(timer);
            timers.delete(timer);
          }
        });
        return;
      }
      case 'oversize': {
        const headers = next.declareLength
          ? { ...next.headers, 'content-length': String(next.bytes) }
          : next.headers;
        response.writeHead(next.status, headers);
        const chunk = Buffer.from(next.chunk);
        let sent = 0;
        while (sent < next.bytes && alive()) {
          const piece = next.bytes - sent >= chunk.length ? chunk : chunk.subarray(0, next.bytes - sent);
          sent += piece.length;
          if (!response.write(piece)) {
            await new Promise<void>((resolve) => {
              // Each wait removes both listeners, so a long body does not pile up 'close' listeners.
              const done = () => {
                response.off('drain', done);
                response.off('close', done);
                resolve();
              };
              response.once('drain', done);
              response.once('close', done);
            });
          }
        }
        if (alive()) response.end();
        return;
      }
      case 'lying-length':
        response.strictContentLength = false;
        response.writeHead(next.status, { ...next.headers, 'content-length': String(next.declaredLength) });
        response.write(next.body);
        later(RESET_GRACE_MS, () => {
          if (!alive()) return;
          markServerClose();
          socket.destroy();
        });
        return;
      case 'handler':
        await next.handle(context);
        return;
    }
  }

  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    push(...steps) {
      queue.push(...steps);
    },
    async settled(index, timeoutMs = 5_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`request ${index} did not settle within ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      try {
        await Promise.race([settledPromise(index), timeout]);
      } finally {
        clearTimeout(timer);
      }
      return requests[index]!;
    },
    async close() {
      closing = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const resolve of settleResolvers.values()) resolve();
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// SSE encoders

/** One Anthropic SSE frame per event: `event: <type>\ndata: <json>\n\n`. */
export function anthropicSse<Event extends { type: string }>(events: readonly Event[]): string[] {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** One OpenAI SSE frame per chunk, `data: <json>\n\n`, then `data: [DONE]\n\n` unless `done` is false. */
export function openAiSse(chunks: readonly unknown[], options: { done?: boolean } = {}): string[] {
  const frames = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
  if (options.done !== false) frames.push('data: [DONE]\n\n');
  return frames;
}

// ---------------------------------------------------------------------------------------------------
// Anthropic fixtures

/** A request body accepted by every provider. */
export function helloRequest(extra: Record<string, unknown> = {}) {
  return {
    model: 'claude-test',
    max_tokens: 64,
    messages: [{ role: 'user' as const, content: 'Hello' }],
    ...extra,
  };
}

/** A complete Anthropic message with one text block. */
export function textMessage(text = 'Hi there') {
  return {
    id: 'msg_01Text',
    type: 'message' as const,
    role: 'assistant' as const,
    model: 'claude-test',
    content: [{ type: 'text' as const, text }],
    stop_reason: 'end_turn' as const,
    stop_sequence: null,
    usage: { input_tokens: 9, output_tokens: 3 },
  };
}

/** A complete Anthropic message that calls one tool. */
export function toolUseMessage() {
  return {
    id: 'msg_01Tool',
    type: 'message' as const,
    role: 'assistant' as const,
    model: 'claude-test',
    content: [
      { type: 'text' as const, text: 'Let me look.' },
      { type: 'tool_use' as const, id: 'toolu_01Weather', name: 'get_weather', input: { city: 'Paris' } },
    ],
    stop_reason: 'tool_use' as const,
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 11 },
  };
}

/** The `message_start` event that opens a stream. */
export function messageStartEvent(id = 'msg_01Stream') {
  return {
    type: 'message_start' as const,
    message: {
      id,
      type: 'message' as const,
      role: 'assistant' as const,
      model: 'claude-test',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 9, output_tokens: 0 },
    },
  };
}

/** The events of a stream answering with one text block, split into `parts` deltas. */
export function textStreamEvents(parts: readonly string[] = ['Hi', ' there']) {
  return [
    messageStartEvent(),
    { type: 'content_block_start' as const, index: 0, content_block: { type: 'text' as const, text: '' } },
    ...parts.map((text) => ({
      type: 'content_block_delta' as const,
      index: 0,
      delta: { type: 'text_delta' as const, text },
    })),
    { type: 'content_block_stop' as const, index: 0 },
    {
      type: 'message_delta' as const,
      delta: { stop_reason: 'end_turn' as const, stop_sequence: null },
      usage: { output_tokens: parts.length },
    },
    { type: 'message_stop' as const },
  ];
}

/** The events of a stream answering with one tool call whose input arrives in two JSON fragments. */
export function toolUseStreamEvents() {
  return [
    messageStartEvent('msg_01StreamTool'),
    {
      type: 'content_block_start' as const,
      index: 0,
      content_block: { type: 'tool_use' as const, id: 'toolu_01Weather', name: 'get_weather', input: {} },
    },
    {
      type: 'content_block_delta' as const,
      index: 0,
      delta: { type: 'input_json_delta' as const, partial_json: '{"city":' },
    },
    {
      type: 'content_block_delta' as const,
      index: 0,
      delta: { type: 'input_json_delta' as const, partial_json: '"Paris"}' },
    },
    { type: 'content_block_stop' as const, index: 0 },
    {
      type: 'message_delta' as const,
      delta: { stop_reason: 'tool_use' as const, stop_sequence: null },
      usage: { output_tokens: 12 },
    },
    { type: 'message_stop' as const },
  ];
}
