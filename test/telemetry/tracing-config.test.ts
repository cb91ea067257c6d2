import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors';
import { tracesUrl } from '../../src/telemetry/tracing';

describe('where traces go', () => {
  it('nowhere without an OTLP endpoint; <endpoint>/v1/traces, or the traces endpoint as given', () => {
    expect(tracesUrl({})).toBeUndefined();
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/t' })).toBe('http://b:4318/t');
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })).toBe('http://a:4318/v1/traces');
  });

  it('another protocol is bad input naming the variable', () => {
    expect(() => tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(InputError);
    expect(() => tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })).toThrow(
      /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL|http\/protobuf only/,
    );
  });
});
