import { describe, expect, it } from 'vitest';
import type { Observed } from '../../../src/core/provider';
import { attemptIdempotencyKey, releaseScope } from '../../../src/core/release-scope';

const at = { cloud: 'local', region: 'local-a' };
const inst = (id: string, createKey?: string): Observed => ({ id, status: 'Running', location: at, ...(createKey ? { createKey } : {}) });

describe('releaseScope', () => {
  it('spares an instance another create made under the same name; deletes its own, by key or by id', () => {
    const listed = [inst('mine', 'k1'), inst('theirs', 'k9'), inst('ambiguous', 'k2')];
    expect(releaseScope(listed, ['mine'], ['k1', 'k2'])).toEqual({ own: ['mine', 'ambiguous'], spare: ['theirs'] });
  });

  it('a given id is own whatever its key; an instance without a key (the cloud keeps none) is own', () => {
    expect(releaseScope([inst('given', 'k9'), inst('nokey')], ['given'], ['k1'])).toEqual({ own: ['given', 'nokey'], spare: [] });
  });

  it('a release that knows no create keys deletes everything of the name (callers from before the keys)', () => {
    const listed = [inst('a', 'k1'), inst('b', 'k9')];
    expect(releaseScope(listed, [], undefined)).toEqual({ own: ['a', 'b'], spare: [] });
    expect(releaseScope(listed, [], [])).toEqual({ own: ['a', 'b'], spare: [] });
  });

  it('a retiring instance beside its replacement on a cloud without create keys: kept by a failed attempt, and its own deletion is exact', () => {
    const listed = [inst('old'), inst('new')];
    expect(releaseScope(listed, [], ['k-new'], { keep: ['old'] })).toEqual({ own: ['new'], spare: ['old'] });
    expect(releaseScope(listed, ['old'], ['k-old'], { exact: true })).toEqual({ own: ['old'], spare: ['new'] });
    expect(releaseScope(listed, ['old'], undefined, { exact: true })).toEqual({ own: ['old'], spare: ['new'] });
  });

  it('the idempotency key of an attempt names its workflow, run and index', () => {
    expect(attemptIdempotencyKey('vm-gpu1', 'run-1', 2)).toBe('vm-gpu1/run-1/2');
  });
});
