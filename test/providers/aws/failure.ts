/** The ProviderError an adapter call rejects with (the AWS adapter tests' shared check). */
import { expect } from 'vitest';
import { ProviderError } from '../../../src/core/errors';

export async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}
