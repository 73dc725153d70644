/**
 * Reads OTLP/HTTP protobuf trace exports with protobufjs, an implementation independent of the one
 * under test, against the OTLP schema (`opentelemetry/proto`: common, resource, trace, and the trace
 * collector's request; the fields a span can carry, events and links included, so that a field written
 * under the wrong number shows up as a field the test did not expect). The spans come out in the shape
 * of the OTLP/JSON mapping (`test/helpers/otlp-receiver.ts`): ids as hex, 64-bit numbers as decimal
 * strings, enums as numbers.
 */
import protobuf from 'protobufjs';

const SCHEMA = `
syntax = "proto3";
package opentelemetry.proto;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }

message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans {
  Resource resource = 1;
  repeated ScopeSpans scope_spans = 2;
  string schema_url = 3;
}
message ScopeSpans {
  InstrumentationScope scope = 1;
  repeated Span spans = 2;
  string schema_url = 3;
}
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  message Event {
    fixed64 time_unix_nano = 1;
    string name = 2;
    repeated KeyValue attributes = 3;
    uint32 dropped_attributes_count = 4;
  }
  repeated Event events = 11;
  uint32 dropped_events_count = 12;
  message Link {
    bytes trace_id = 1;
    bytes span_id = 2;
    string trace_state = 3;
    repeated KeyValue attributes = 4;
    uint32 dropped_attributes_count = 5;
    fixed32 flags = 6;
  }
  repeated Link links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;
}
message Status { string message = 2; int32 code = 3; }
`;

const root = protobuf.parse(SCHEMA, { keepCase: false }).root;
const ExportTraceServiceRequest = root.lookupType('opentelemetry.proto.ExportTraceServiceRequest');

/** Converts protobufjs's plain object to the OTLP/JSON mapping: bytes as hex instead of base64. */
function hexIds(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => hexIds(item));
  if (typeof value !== 'object' || value === null) {
    if (typeof value === 'string' && /(^|[a-z])(traceId|spanId|parentSpanId)$/i.test(key)) {
      return Buffer.from(value, 'base64').toString('hex');
    }
    return value;
  }
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, hexIds(item, name)]));
}

/**
 * A protobuf `ExportTraceServiceRequest` as the OTLP/JSON mapping writes it. Throws when the bytes are
 * not a valid message of the schema.
 */
export function decodeTraceRequest(body: Uint8Array): unknown {
  const message = ExportTraceServiceRequest.decode(body);
  return hexIds(
    ExportTraceServiceRequest.toObject(message, {
      longs: String,
      bytes: String,
      defaults: false,
      arrays: false,
      oneofs: false,
    }),
  );
}
