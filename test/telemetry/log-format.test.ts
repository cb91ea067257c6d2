import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors';
import { namedBy } from '../../src/telemetry/activity-attributes';
import { jsonLine, textLine, toEntry } from '../../src/telemetry/log-format';
import { GpuprovLogger, logLevelFromEnv } from '../../src/telemetry/logger';

const activityMeta = { sdkComponent: 'worker', workflowId: 'vm-gpu1', activityType: 'awaitRunning', attempt: 3, taskToken: 'AAAA' };

describe('worker log lines', () => {
  it('a retryable not-ready poll is one debug line; a final one stays a warning', () => {
    for (const type of ['NotReady', 'SshNotReady', 'SshAuthFailed']) {
      const e = toEntry('WARN', 'Activity failed', { ...activityMeta, error: ApplicationFailure.retryable('instance i-1 is Pending', type) });
      expect(e).toMatchObject({
        level: 'DEBUG',
        msg: 'not ready yet',
        fields: { failure: type, detail: 'instance i-1 is Pending', vmName: 'gpu1', activityAttempt: 3 },
      });
      expect(e.fields).not.toHaveProperty('error');
    }
    const final = toEntry('WARN', 'Activity failed', { ...activityMeta, error: ApplicationFailure.nonRetryable('still present at the deadline', 'NotReady') });
    expect(final).toMatchObject({ level: 'WARN', msg: 'Activity failed', fields: { error: { type: 'NotReady', message: 'still present at the deadline' } } });
    expect(toEntry('WARN', 'Activity failed', { ...activityMeta, error: ApplicationFailure.retryable('no room', 'Capacity') }).level).toBe('WARN');
  });

  it('one JSON object per line: leading fields first, no colour codes, no task token, errors as objects', () => {
    const line = jsonLine(
      toEntry('WARN', '\u001b[31mboom\u001b[39m', { ...activityMeta, cloud: 'aws', error: new Error('ssh said \u001b[1mno\u001b[0m\nbye') }, () => new Date(0)),
    );
    for (const bad of ['\n', '\u001b', '\\u001b']) expect(line).not.toContain(bad);
    const o = JSON.parse(line) as Record<string, unknown>;
    expect(Object.keys(o).slice(0, 7)).toEqual(['time', 'level', 'msg', 'component', 'vmName', 'workflowId', 'cloud']);
    expect(o).toMatchObject({
      time: '1970-01-01T00:00:00.000Z',
      level: 'warn',
      msg: 'boom',
      activityAttempt: 3,
      error: { name: 'Error', message: 'ssh said no\nbye' },
    });
    expect(o).not.toHaveProperty('taskToken');
  });

  it('workflow lines keep the SDK timestamp and their launch attempt; plain text for a terminal', () => {
    const ts = BigInt(Date.UTC(2026, 0, 2, 3, 4, 5, 678)) * 1_000_000n;
    const e = toEntry('INFO', 'stage booting', {
      [Symbol.for('log_timestamp')]: ts,
      sdkComponent: 'workflow',
      workflowId: 'vm-gpu1',
      attempt: 2,
      cloud: 'local',
      note: 'two words',
    });
    expect(e.time.toISOString()).toBe('2026-01-02T03:04:05.678Z');
    expect(textLine(e)).toBe('03:04:05.678 INFO  stage booting component=workflow vmName=gpu1 workflowId=vm-gpu1 attempt=2 cloud=local note="two words"');
  });

  it('the level filter, and announce() past it', () => {
    const lines: string[] = [];
    const log = new GpuprovLogger({ level: 'WARN', format: 'json', write: (l) => lines.push(l) });
    log.info('dropped');
    log.warn('kept');
    log.announce('polling');
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['kept', 'polling']);
    expect(lines.every((l) => l.endsWith('}\n'))).toBe(true);
  });

  it('GPUPROV_LOG_LEVEL: any case, default info, anything else is bad input naming the variable', () => {
    expect(logLevelFromEnv({})).toBe('INFO');
    expect(logLevelFromEnv({ GPUPROV_LOG_LEVEL: 'debug' })).toBe('DEBUG');
    expect(logLevelFromEnv({ GPUPROV_LOG_LEVEL: 'Warning' })).toBe('WARN');
    expect(() => logLevelFromEnv({ GPUPROV_LOG_LEVEL: 'loud' })).toThrow(InputError);
  });

  it('activity lines name the cloud and VM their input is about', () => {
    expect(
      namedBy([
        { cloud: 'aws', region: 'us-east-1', instanceType: 'p5' },
        { vmName: 'gpu1', publicKeys: [] },
      ]),
    ).toEqual({ cloud: 'aws', vmName: 'gpu1' });
    expect(namedBy([{ at: { cloud: 'gcp', region: 'x' }, vmName: 'gpu2' }])).toEqual({ cloud: 'gcp', vmName: 'gpu2' });
    expect(namedBy([{ endpoint: { host: 'h', port: 22 } }])).toEqual({});
  });
});
