/**
 * An OTLP/HTTP traces receiver on 127.0.0.1 for tests: accepts `POST /v1/traces` in
 * http/protobuf (what gpuprov's exporter sends) and keeps every span's ids and name. The
 * protobuf is decoded with protobufjs and the few fields of opentelemetry-proto's
 * ExportTraceServiceRequest that tests read.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import * as protobuf from 'protobufjs';

const SCHEMA = `
syntax = "proto3";
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { string string_value = 1; }
message ScopeSpans { repeated Span spans = 2; }
message Span { bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; }
`;

const Request = protobuf.parse(SCHEMA, { keepCase: true }).root.lookupType('ExportTraceServiceRequest');

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  service: string;
}

interface Decoded {
  resource_spans?: {
    resource?: { attributes?: { key: string; value?: { string_value?: string } }[] };
    scope_spans?: { spans?: { trace_id: Uint8Array; span_id: Uint8Array; parent_span_id?: Uint8Array; name: string }[] }[];
  }[];
}

const hex = (b: Uint8Array | undefined): string => Buffer.from(b ?? []).toString('hex');

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      try {
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const msg = Request.toObject(Request.decode(body), { defaults: false }) as Decoded;
        for (const rs of msg.resource_spans ?? []) {
          const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value?.string_value ?? '';
          for (const ss of rs.scope_spans ?? []) {
            for (const s of ss.spans ?? [])
              spans.push({ traceId: hex(s.trace_id), spanId: hex(s.span_id), parentSpanId: hex(s.parent_span_id), name: s.name, service });
          }
        }
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
