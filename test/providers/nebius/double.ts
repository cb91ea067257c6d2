/** The Nebius adapter wired to its stateful gRPC fixture; reusable by cross-cloud workflow tests. */
import type { ErrorKind } from '../../../src/core/errors';
import { NebiusProvider } from '../../../src/providers/nebius';
import { PROJECTS, TOKEN, startNebiusServer, type FaultName, type NebiusServer } from '../../fixtures/nebius/server';
import { CONFORMANCE_DEPLOYMENT, type Primitive } from '../conformance';

export interface NebiusDouble {
  provider: NebiusProvider;
  server: NebiusServer;
  countLive(): Promise<number>;
  twin(deployment: string): NebiusProvider;
  countSide(): Promise<number>;
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  close(): Promise<void>;
}

/** The RPC each primitive calls first (or the one that decides its outcome). */
const RPC: Record<Primitive, string> = {
  plan: 'PlatformService.List',
  prepare: 'SubnetService.List',
  create: 'InstanceService.Create',
  observe: 'InstanceService.List',
  delete: 'InstanceService.List',
  cleanup: 'DiskService.GetByName',
};
const FAULT: Partial<Record<ErrorKind, FaultName>> = {
  Capacity: 'capacity',
  Quota: 'quota',
  Credentials: 'unauthenticated',
  Transient: 'unavailable',
  InvalidRequest: 'badRequest',
};

export async function startNebiusDouble(): Promise<NebiusDouble> {
  const server = await startNebiusServer();
  // Operations finish on their first poll; no real pause between polls.
  const make = (deployment: string): NebiusProvider =>
    new NebiusProvider({
      deployment,
      token: TOKEN,
      projects: { ...PROJECTS },
      endpoint: server.endpoint,
      insecure: true,
      timeoutMs: 5_000,
      sleep: async () => {},
      warn: () => {},
    });
  return {
    provider: make(CONFORMANCE_DEPLOYMENT),
    twin: make,
    countSide: async () => server.disks().length,
    server,
    countLive: async () => server.liveCount(),
    arm: async (kind, primitive) => {
      const fault = FAULT[kind];
      if (!fault) throw new Error(`nebius double cannot produce ${kind}`);
      server.arm(RPC[primitive], fault);
    },
    close: async () => {
      await server.close();
    },
  };
}
