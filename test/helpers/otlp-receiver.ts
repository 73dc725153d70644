/**
 * A real OTLP/HTTP receiver on loopback for tests: a small `node:http` server that records every export
 * the OTLP exporters POST to it and answers each with an empty success; and readers of the spans in its
 * exports (`http/json`, or `http/protobuf` read with protobufjs) and of the histograms in its `http/json`
 * metric exports.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeTraceRequest } from './otlp-protobuf.js';

export interface Export {
  path: string;
  contentType: string;
  /** The request headers as they arrived. */
  headers: Record<string, string | string[] | undefined>;
  /** The body, uncompressed when it came gzipped. */
  body: Buffer;
}

export interface Receiver {
  url: string;
  exports: Export[];
  close(): Promise<void>;
}

/**
 * Starts a receiver on loopback. With `refuseWith`, it records each export and answers it with that
 * status and no body, as a collector refusing the export would.
 */
export async function startReceiver(options: { refuseWith?: number } = {}): Promise<Receiver> {
  const exports: Export[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      exports.push({
        path: request.url ?? '',
        contentType: request.headers['content-type'] ?? '',
        headers: request.headers,
        body: request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body,
      });
      if (options.refuseWith !== undefined) {
        response.writeHead(options.refuseWith);
        response.end();
        return;
      }
      // An empty export response: success, nothing rejected.
      const json = (request.headers['content-type'] ?? '').includes('json');
      response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      response.end(json ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values: OtlpValue[] };
};
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number };
}

export function plain(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return value.arrayValue.values.map(plain);
  return undefined;
}

export function attributes(span: {
  attributes: { key: string; value: OtlpValue }[];
}): Record<string, unknown> {
  const keys = span.attributes.map(({ key }) => key);
  const repeated = keys.filter((key, index) => keys.indexOf(key) !== index);
  // OTLP asks for each key once: a span that repeats one is wrong whatever its values.
  if (repeated.length > 0) throw new Error(`span attributes repeat ${repeated.join(', ')}`);
  return Object.fromEntries(span.attributes.map(({ key, value }) => [key, plain(value)]));
}

/** Every trace export the receiver got, read as the OTLP/JSON mapping whatever its encoding. */
export function traceRequests(receiver: Receiver): {
  resourceSpans: {
    resource: { attributes: { key: string; value: OtlpValue }[] };
    scopeSpans: { scope: { name: string; version?: string }; spans: OtlpSpan[] }[];
  }[];
}[] {
  return receiver.exports
    .filter((entry) => entry.path === '/v1/traces')
    .map(
      (entry) =>
        (entry.contentType.includes('protobuf')
          ? decodeTraceRequest(entry.body)
          : JSON.parse(entry.body.toString('utf8'))) as ReturnType<typeof traceRequests>[number],
    );
}

export function spansOf(receiver: Receiver): OtlpSpan[] {
  return traceRequests(receiver).flatMap((body) =>
    body.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)),
  );
}

interface OtlpHistogramPoint {
  attributes: { key: string; value: OtlpValue }[];
  sum: number;
  count: string | number;
}

/**
 * The data points of histogram `name` in the receiver's `http/json` metric exports, each as its
 * attributes with its `count` and `sum`, in a stable order.
 */
export function histogramPoints(receiver: Receiver, name: string): Record<string, unknown>[] {
  return receiver.exports
    .filter((entry) => entry.path === '/v1/metrics')
    .flatMap((entry) => {
      const body = JSON.parse(entry.body.toString('utf8')) as {
        resourceMetrics: {
          scopeMetrics: {
            metrics: { name: string; histogram?: { dataPoints: OtlpHistogramPoint[] } }[];
          }[];
        }[];
      };
      return body.resourceMetrics.flatMap((resource) =>
        resource.scopeMetrics.flatMap((scope) => scope.metrics),
      );
    })
    .filter((metric) => metric.name === name)
    .flatMap((metric) => metric.histogram?.dataPoints ?? [])
    .map((point) => ({ ...attributes(point), count: Number(point.count), sum: point.sum }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}
