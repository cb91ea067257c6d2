/** The small workflow of test/e2e/codec.test.ts: its input and result hold the plaintext the codec hides. */
export interface CodecProbeInput {
  name: string;
  ip: string;
}

export async function codecProbeWorkflow(input: CodecProbeInput): Promise<string> {
  return Promise.resolve(`VM ${input.name} answers at ${input.ip}`);
}
