import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { AesGcmCodec, parseKeys } from '../../../src/codec';
import { decodeHistory } from '../../../src/codec/history';

const codec = new AesGcmCodec(parseKeys([`k1=${randomBytes(32).toString('base64')}`], 'test'));
const enc = async (v: unknown): Promise<Payload> => (await codec.encode([defaultPayloadConverter.toPayload(v)]))[0]!;
const read = (p: unknown): unknown => defaultPayloadConverter.fromPayload(p as Payload);

describe('decodeHistory', () => {
  it('decodes every encrypted payload in place: inputs, results, failure details; plain ones and bytes stay', async () => {
    const plainSa = defaultPayloadConverter.toPayload('gpu1');
    const history = {
      events: [
        {
          eventId: 1,
          workflowExecutionStartedEventAttributes: {
            input: { payloads: [await enc({ name: 'gpu1' })] },
            searchAttributes: { indexedFields: { GpuprovVmName: plainSa } },
          },
        },
        { eventId: 2, activityTaskCompletedEventAttributes: { result: { payloads: [await enc('ok'), await enc(42)] } } },
        {
          eventId: 3,
          activityTaskFailedEventAttributes: {
            failure: { message: 'm', cause: { applicationFailureInfo: { details: { payloads: [await enc({ kind: 'Capacity' })] } } } },
          },
        },
        { eventId: 4, markerRecordedEventAttributes: { details: { data: { payloads: [await enc('marker')] } } }, raw: new Uint8Array([1, 2]) },
      ],
    };
    const out = await decodeHistory(history, [codec]);
    expect(out).toBe(history);
    const e = history.events;
    expect(read(e[0]!.workflowExecutionStartedEventAttributes!.input.payloads[0])).toEqual({ name: 'gpu1' });
    expect(e[0]!.workflowExecutionStartedEventAttributes!.searchAttributes.indexedFields.GpuprovVmName).toBe(plainSa);
    expect(e[1]!.activityTaskCompletedEventAttributes!.result.payloads.map(read)).toEqual(['ok', 42]);
    expect(read(e[2]!.activityTaskFailedEventAttributes!.failure.cause.applicationFailureInfo.details.payloads[0])).toEqual({ kind: 'Capacity' });
    expect(read(e[3]!.markerRecordedEventAttributes!.details.data.payloads[0])).toBe('marker');
    expect(e[3]!.raw).toEqual(new Uint8Array([1, 2]));
  });

  it('no codecs: untouched', async () => {
    const p = await enc('x');
    const h = { events: [{ input: { payloads: [p] } }] };
    await decodeHistory(h, []);
    expect(h.events[0]!.input.payloads[0]).toBe(p);
  });
});
