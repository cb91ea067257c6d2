/** Trivial workflows for harness tests (e.g. a dev server restarting under a running workflow). */
import { condition, defineSignal, setHandler } from '@temporalio/workflow';

export const finishSignal = defineSignal<[string]>('finish');

/** Waits for `finish`, then returns its argument. */
export async function waitForSignalWorkflow(): Promise<string> {
  let result: string | undefined;
  setHandler(finishSignal, (value) => {
    result = value;
  });
  await condition(() => result !== undefined);
  return result!;
}
