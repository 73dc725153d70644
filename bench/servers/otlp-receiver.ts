/**
 * A minimal OTLP/HTTP receiver on loopback: it accepts what the OpenTelemetry exporters POST to
 * `/v1/traces` and `/v1/metrics` (protobuf or JSON), answers each with an empty success, and counts
 * the exports and their bytes. `GET /stats` answers the counts as JSON. With `--print`, each JSON trace
 * export is printed to stdout as the spans it carries, one JSON object a line, attributes as a map (to
 * see what a collector would see: `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`).
 *
 * Run: `tsx bench/servers/otlp-receiver.ts [--print] [--port <n>]` (default: a free port); prints
 * `otlp receiver listening on <url>` on stderr.
 *
 * @module
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: { key: string; value: OtlpValue }[];
  status?: { code?: number; message?: string };
}

const shouldPrint = process.argv.includes('--print');
const portIndex = process.argv.indexOf('--port');
const port = portIndex === -1 ? 0 : Number(process.argv[portIndex + 1]);
const stats: Record<string, { exports: number; bytes: number }> = {};

function plain(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plain);
  return undefined;
}

function printSpans(body: Buffer): void {
  const parsed = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: { scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[] }[];
  };
  for (const resource of parsed.resourceSpans ?? []) {
    for (const scope of resource.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        const attributes = Object.fromEntries(
          (span.attributes ?? []).map(({ key, value }) => [key, plain(value)]),
        );
        process.stdout.write(`${JSON.stringify({ scope: scope.scope?.name, ...span, attributes })}\n`);
      }
    }
  }
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const path = request.url ?? '';
    if (request.method === 'GET' && path === '/stats') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(stats));
      return;
    }
    const body = Buffer.concat(chunks);
    const entry = (stats[path] ??= { exports: 0, bytes: 0 });
    entry.exports += 1;
    entry.bytes += body.length;
    const isJson = (request.headers['content-type'] ?? '').includes('json');
    if (shouldPrint && isJson && path === '/v1/traces') printSpans(body);
    // An empty export response: everything accepted.
    response.writeHead(200, { 'content-type': isJson ? 'application/json' : 'application/x-protobuf' });
    response.end(isJson ? '{}' : undefined);
  });
});

server.listen(port, '127.0.0.1', () => {
  const address = server.address() as AddressInfo;
  process.stderr.write(`otlp receiver listening on http://127.0.0.1:${address.port}\n`);
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
