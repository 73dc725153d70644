/**
 * Sends batches of recorded spans to an OTLP/HTTP collector with OpenTelemetry's own OTLP HTTP transport
 * (`@opentelemetry/otlp-exporter-base`), so everything an operator sets for the official exporters
 * applies unchanged: `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`, `…_TIMEOUT`, `…_COMPRESSION`, the
 * certificate variables, keep-alive, and retries of a collector's 429, 502, 503 and 504 with backoff.
 * Only the encoding is tpx's (`otlp-trace-encoding.ts`): it writes the proxy's spans directly, without
 * first building the SDK's span objects.
 *
 * @module
 */
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import { ExportResultCode } from '@opentelemetry/core';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { newSpanBatch, type SpanBatchEncoding, type TraceExportOrigin } from './otlp-trace-encoding.js';
import type { SpanBatchExporter } from './span-batches.js';

/** Options of {@link createOtlpSpanExporter}. */
export interface OtlpSpanExporterOptions {
  /** The traces endpoint, e.g. `http://localhost:4318/v1/traces`. */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  origin: TraceExportOrigin;
}

/** An exporter of recorded spans to the OTLP/HTTP endpoint `options.url`. */
export function createOtlpSpanExporter(options: OtlpSpanExporterOptions): SpanBatchExporter {
  const isJson = options.protocol === 'http/json';
  const responses = isJson ? JsonTraceSerializer : ProtobufTraceSerializer;
  const delegate = createOtlpHttpExportDelegate(
    convertLegacyHttpOptions({ url: options.url }, 'TRACES', 'v1/traces', {
      'Content-Type': isJson ? 'application/json' : 'application/x-protobuf',
    }),
    {
      serializeRequest: (batch: SpanBatchEncoding) => batch.request(),
      // A collector's answer (partial success) is read as the official exporters read it.
      deserializeResponse: (data: Uint8Array) => responses.deserializeResponse(data),
    },
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch: SpanBatchEncoding) => batch.count },
    undefined,
  );
  const exporter = new OTLPExporterBase<SpanBatchEncoding>(delegate);
  return {
    newBatch: (expectedSpans) => newSpanBatch(options.protocol, options.origin, expectedSpans),
    export: (batch) =>
      new Promise<void>((resolve, reject) => {
        exporter.export(batch, (result) => {
          if (result.code === ExportResultCode.SUCCESS) resolve();
          else reject(result.error ?? new Error('the span export failed'));
        });
      }),
    shutdown: () => exporter.shutdown(),
  };
}
