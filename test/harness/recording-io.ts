/** A CLI Io that records what a command printed, for tests that read it back. */
import type { Io } from '../../src/client/command';

export type RecordingIo = Io & { outText: string; errText: string };

/** An Io with `env`, not a terminal, whose out and err append to `outText` and `errText`. */
export function recordingIo(env: NodeJS.ProcessEnv): RecordingIo {
  const o: RecordingIo = {
    outText: '',
    errText: '',
    out: (s) => void (o.outText += s),
    err: (s) => void (o.errText += s),
    isTTY: false,
    env,
  };
  return o;
}
