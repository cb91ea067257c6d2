/**
 * Nebius over gRPC: our adapter runs a whole life against the fixture; the official SDK makes
 * the same RPCs against a fresh fixture (test/contract/nebius.py). Every RPC the SDK cannot
 * complete fails; every RPC our adapter made that the SDK's run did not make is a difference.
 * Request fields are not diffed here: the proto check compares our messages with the SDK's.
 */
import { PROJECTS, TOKEN, startNebiusServer } from '../fixtures/nebius/server';
import { startNebiusDouble } from '../providers/nebius/double';
import { exercise, judge, type CloudReport } from './check';
import type { Difference } from './shapes';
import { runDriver } from './vendor';

const REGION = 'eu-north1';

export async function checkNebiusGrpc(): Promise<CloudReport> {
  const ours = await startNebiusDouble();
  let ourRpcs: string[];
  try {
    await exercise(ours.provider, { vmName: 'contract', gpu: { model: 'H100', count: 1 }, regions: [REGION], k8s: true });
    ourRpcs = [...new Set(ours.server.log)];
  } finally {
    await ours.close();
  }
  const server = await startNebiusServer();
  let result;
  try {
    result = await runDriver('nebius.py', { url: server.endpoint, credentials: { token: TOKEN, project: PROJECTS[REGION] } });
  } finally {
    await server.close();
  }
  const made = new Set(result.calls.map((c) => c.call));
  const found: Difference[] = ourRpcs.filter((rpc) => !made.has(rpc)).map((rpc) => ({ cloud: 'nebius-grpc', call: rpc, aspect: 'call', ours: 'sent', vendor: 'not sent' }));
  const j = judge('nebius-grpc', found);
  return {
    cloud: 'nebius (gRPC fixture)',
    client: result.client,
    version: result.version,
    mismatches: j.mismatches,
    accepted: j.accepted,
    failures: [...result.calls.filter((c) => !c.ok).map((c) => `the SDK rejected the fixture at ${c.call}: ${c.error ?? ''}`), ...j.failures],
    notes: [`our adapter made ${ourRpcs.join(', ')}`],
  };
}
