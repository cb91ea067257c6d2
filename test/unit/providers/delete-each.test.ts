/** deleteEach: one call per distinct id; "already gone" is success, any other error stops the loop. */
import { describe, expect, it } from 'vitest';
import { deleteEach } from '../../../src/providers/delete-each';

describe('deleteEach', () => {
  it('deletes each id once, treats already-gone as success and stops at another error', async () => {
    const calls: string[] = [];
    const del = async (id: string): Promise<void> => {
      calls.push(id);
      if (id === 'gone') throw new Error('404');
      if (id === 'bad') throw new Error('500');
    };
    await deleteEach(['a', 'gone', 'a', 'b'], del, (e) => (e as Error).message === '404');
    expect(calls).toEqual(['a', 'gone', 'b']);
    calls.length = 0;
    await expect(deleteEach(['a', 'bad', 'c'], del, (e) => (e as Error).message === '404')).rejects.toThrow('500');
    expect(calls).toEqual(['a', 'bad']);
    await expect(deleteEach(['gone'], del)).rejects.toThrow('404');
  });
});
