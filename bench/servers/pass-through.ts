/**
 * A bare pass-through HTTP proxy: the baseline the `tpx serve` numbers are compared with. It forwards
 * each request's method, path, headers and body bytes to one upstream origin over keep-alive
 * connections, and pipes the upstream's status, headers and body bytes back as they arrive. It parses
 * no body, so what it costs is the cost of an extra HTTP hop in Node and nothing more.
 *
 * Run: `tsx bench/servers/pass-through.ts <upstream origin>`; prints `pass-through listening on <url>`.
 *
 * @module
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** Headers that belong to one connection, not to the message (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) kept[name] = value;
  }
  return kept;
}

const upstream = new URL(process.argv[2] ?? '');
const agent = new Agent({ keepAlive: true, maxSockets: Infinity, noDelay: true });

const server = createServer({ noDelay: true }, (request, response) => {
  const outgoing = httpRequest(
    {
      host: upstream.hostname,
      port: upstream.port,
      method: request.method,
      path: request.url,
      headers: { ...endToEnd(request.headers), host: upstream.host },
      agent,
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      answer.pipe(response);
    },
  );
  outgoing.on('error', () => {
    if (!response.headersSent) response.writeHead(502).end();
    else response.destroy();
  });
  // A client that leaves takes the upstream request with it.
  response.on('close', () => {
    if (!response.writableFinished) outgoing.destroy();
  });
  request.pipe(outgoing);
});
server.keepAliveTimeout = 30_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stderr.write(`pass-through listening on http://127.0.0.1:${port}\n`);
});

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  agent.destroy();
});
