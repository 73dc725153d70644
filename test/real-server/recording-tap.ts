/**
 * A recording tap: a loopback HTTP proxy put between tpx and a real server, so a test can read what
 * tpx really sent and what the server really answered. Bodies are passed on chunk by chunk as they
 * arrive (a stream stays a stream) and kept whole for the record.
 *
 * ```ts
 * const tap = await startRecordingTap(server.url);   // forwards everything to the server
 * createTransport({ env: {}, tpxToken: 't', tpxBaseUrl: `${tap.url}/v1`, tpxDialect: 'llamacpp' });
 * …
 * tap.exchanges[0].request.json;   // the Chat Completions body tpx sent
 * tap.exchanges[0].response.text;  // the server's answer, bytes as received (SSE included)
 * await tap.close();
 * ```
 *
 * `rewriteRequest` may change a JSON request body on its way to the server (the record keeps the body as
 * sent): a test uses it to ask the tiny models for a tool where a real client leaves the choice to them.
 *
 * @module
 */
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request and its answer, as they crossed the tap. */
export interface TappedExchange {
  request: { method: string; url: string; headers: IncomingHttpHeaders; text: string; json: unknown };
  /**
   * Filled in as the answer arrives; `complete` turns true once its body has ended. `callerLeft` turns
   * true when the caller closed its connection first (a stream read up to its last event may be closed
   * before the server's body ends): `text` then holds what had arrived by then.
   */
  response: {
    status: number;
    headers: IncomingHttpHeaders;
    text: string;
    json: unknown;
    complete: boolean;
    callerLeft: boolean;
  };
}

export interface RecordingTap {
  /** `http://127.0.0.1:PORT`, to use in place of the server's URL. */
  readonly url: string;
  /** Every exchange so far, in the order the requests arrived. */
  readonly exchanges: TappedExchange[];
  /** Stops listening and drops every open connection. */
  close(): Promise<void>;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

async function readAll(stream: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** How a tap may change what it forwards. */
export interface RecordingTapOptions {
  /**
   * Called with each request's path and parsed JSON body; a returned value is sent (as JSON) in place of
   * the body, `undefined` leaves the body as it came. @default none
   */
  rewriteRequest?: (url: string, json: unknown) => unknown;
}

/** Starts a tap on an ephemeral loopback port that forwards to `targetUrl` (`http://host:port`). */
export async function startRecordingTap(
  targetUrl: string,
  options: RecordingTapOptions = {},
): Promise<RecordingTap> {
  const target = new URL(targetUrl);
  const exchanges: TappedExchange[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((incoming, outgoing) => {
    void (async () => {
      const received = await readAll(incoming);
      const rewritten = options.rewriteRequest?.(incoming.url ?? '/', parseJson(received));
      const text = rewritten === undefined ? received : JSON.stringify(rewritten);
      const headers = { ...incoming.headers, host: target.host };
      if (rewritten !== undefined) {
        delete headers['transfer-encoding'];
        headers['content-length'] = String(Buffer.byteLength(text));
      }
      const exchange: TappedExchange = {
        request: {
          method: incoming.method ?? 'GET',
          url: incoming.url ?? '/',
          headers: incoming.headers,
          text,
          json: parseJson(text),
        },
        response: { status: 0, headers: {}, text: '', json: undefined, complete: false, callerLeft: false },
      };
      exchanges.push(exchange);
      const chunks: Buffer[] = [];
      const forwarded = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: exchange.request.method,
          path: exchange.request.url,
          headers,
          // A fresh connection per request: a pooled one the server already closed would turn into a
          // failure that belongs to the tap, not to what is under test.
          agent: false,
        },
        (answer) => {
          exchange.response.status = answer.statusCode ?? 0;
          exchange.response.headers = answer.headers;
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            outgoing.write(chunk);
          });
          answer.on('end', () => {
            exchange.response.text = Buffer.concat(chunks).toString('utf8');
            exchange.response.json = parseJson(exchange.response.text);
            exchange.response.complete = true;
            outgoing.end();
          });
          answer.on('error', () => outgoing.destroy());
        },
      );
      forwarded.on('error', () => outgoing.destroy());
      // The caller went away: stop the forwarded request too, as a direct connection would, keeping what
      // had arrived.
      outgoing.on('close', () => {
        if (outgoing.writableFinished) return;
        exchange.response.text = Buffer.concat(chunks).toString('utf8');
        exchange.response.callerLeft = true;
        forwarded.destroy();
      });
      forwarded.end(text);
    })();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((closed) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => closed());
      }),
  };
}
