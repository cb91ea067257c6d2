/**
 * Nebius over gRPC: our adapter runs a whole life against the fixture; the official SDK makes
 * the same RPCs against a fresh fixture (test/contract/nebius.py). Both authenticate with the
 * fixture's service-account credentials file, so the SDK's own token exchange proves the
 * fixture's TokenExchangeService. Every RPC the SDK cannot complete fails; every RPC our adapter
 * made that the SDK's run did not make is a difference. Request fields are not diffed here: the
 * proto check compares our messages with the SDK's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NebiusProvider } from '../../src/providers/nebius';
import { readServiceAccountFile } from '../../src/providers/nebius/auth';
import { serviceAccountCredentials } from '../fixtures/nebius/iam';
import { PROJECTS, startNebiusServer, type NebiusServer } from '../fixtures/nebius/server';
import { SPEC, exercise, judge, type CloudReport } from './check';
import type { Difference } from './shapes';
import { runDriver } from './vendor';

const REGION = 'eu-north1';
/** A capacity block group of the region's project, listed by both (a reservation plan, the SDK's List). */
const GROUP = { id: 'capacityblockgroup-e00contract', parentId: PROJECTS[REGION], region: REGION, platform: 'gpu-h100-sxm', limit: 2, usage: 0 };

export async function checkNebiusGrpc(): Promise<CloudReport> {
  const dir = mkdtempSync(join(tmpdir(), 'gpuprov-nebius-sa-'));
  const file = join(dir, 'credentials.json');
  writeFileSync(file, serviceAccountCredentials(), { mode: 0o600 });
  try {
    const ourRpcs = await runOurs(file);
    const server = await startNebiusServer();
    server.groups.push(GROUP);
    let result;
    let sdkRpcs: string[];
    try {
      result = await runDriver('nebius.py', { url: server.endpoint, credentials: { credentials_file: file, project: PROJECTS[REGION] } });
      sdkRpcs = [...new Set(server.log)];
    } finally {
      await server.close();
    }
    const made = new Set([...result.calls.map((c) => c.call), ...sdkRpcs.filter((r) => r === 'TokenExchangeService.Exchange')]);
    const found: Difference[] = ourRpcs
      .filter((rpc) => !made.has(rpc))
      .map((rpc) => ({ cloud: 'nebius-grpc', call: rpc, aspect: 'call', ours: 'sent', vendor: 'not sent' }));
    const j = judge('nebius-grpc', found);
    return {
      cloud: 'nebius (gRPC fixture)',
      client: result.client,
      version: result.version,
      mismatches: j.mismatches,
      accepted: j.accepted,
      failures: [...result.calls.filter((c) => !c.ok).map((c) => `the SDK rejected the fixture at ${c.call}: ${c.error ?? ''}`), ...j.failures],
      notes: [`our adapter made ${ourRpcs.join(', ')}`, `the SDK made ${sdkRpcs.join(', ')}`],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A spot offer's life: planned with `spot`, created preemptible, reclaimed by the fixture, seen preempted, deleted. */
async function spotLife(provider: NebiusProvider, server: NebiusServer): Promise<void> {
  const offer = (await provider.plan({ vmName: 'contract-spot', gpu: { model: 'H100', count: 1 }, regions: [REGION], k8s: true, spot: 'only' })).find(
    (o) => o.market === 'spot',
  );
  if (!offer) throw new Error('nebius: the fixture planned no spot offer');
  const at = { cloud: 'nebius', region: REGION };
  const spec = { ...SPEC, vmName: 'contract-spot', idempotencyKey: 'contract-spot/1' };
  const id = await provider.create(offer, await provider.prepare(offer, spec), spec);
  for (let i = 0; i < 6 && !(await provider.observe(at, spec.vmName)).some((o) => o.status === 'Running'); i++);
  server.preempt(id);
  if (!(await provider.observe(at, spec.vmName)).some((o) => o.preemption)) throw new Error('nebius: a reclaimed preemptible instance was not seen preempted');
  await provider.delete(at, spec.vmName, [id]);
  for (let i = 0; i < 6 && (await provider.observe(at, spec.vmName)).length > 0; i++);
  await provider.cleanup(at, spec.vmName);
}

/** The RPCs our adapter makes over a whole life, a spot life, a reservation plan and one sweep listing, authenticated with the service-account file. */
async function runOurs(file: string): Promise<string[]> {
  const server = await startNebiusServer();
  try {
    const provider = new NebiusProvider({
      serviceAccount: readServiceAccountFile(file),
      projects: { ...PROJECTS },
      endpoint: server.endpoint,
      insecure: true,
      timeoutMs: 5_000,
      sleep: async () => {},
    });
    await exercise(provider, { vmName: 'contract', gpu: { model: 'H100', count: 1 }, regions: [REGION], k8s: true });
    await spotLife(provider, server);
    server.groups.push(GROUP);
    await provider.plan({ vmName: 'contract-rsv', regions: [REGION], k8s: false, reserved: { kind: 'reservation', id: GROUP.id } });
    await provider.sideInventory({ cloud: 'nebius', region: REGION });
    return [...new Set(server.log)];
  } finally {
    await server.close();
  }
}
