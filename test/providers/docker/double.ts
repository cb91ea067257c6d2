/** The Docker adapter wired to its unix-socket Engine double; reusable by cross-cloud workflow tests. */
import type { ErrorKind } from '../../../src/core/errors';
import { DockerProvider } from '../../../src/providers/docker';
import { startDockerServer, type DockerServer, type FaultName, type ROUTES } from '../../fixtures/docker/server';
import { CONFORMANCE_DEPLOYMENT, type Primitive } from '../conformance';

export interface DockerDouble {
  provider: DockerProvider;
  server: DockerServer;
  countLive(): Promise<number>;
  twin(deployment: string): DockerProvider;
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  close(): Promise<void>;
}

/** The Engine call that decides each primitive's outcome. */
const ROUTE: Record<Primitive, keyof typeof ROUTES> = {
  plan: 'info',
  prepare: 'image',
  create: 'create',
  observe: 'list',
  delete: 'list',
  cleanup: 'list',
};
const FAULT: Partial<Record<ErrorKind, FaultName>> = {
  Unavailable: 'noImage',
  Credentials: 'authz',
  Transient: 'serverError',
  InvalidRequest: 'badRequest',
};

export async function startDockerDouble(): Promise<DockerDouble> {
  const server = await startDockerServer();
  const make = (deployment: string): DockerProvider => new DockerProvider({ socketPath: server.socketPath, timeoutMs: 5_000, deployment });
  return {
    provider: make(CONFORMANCE_DEPLOYMENT),
    twin: make,
    server,
    countLive: async () => server.liveCount(),
    arm: async (kind, primitive) => {
      const fault = FAULT[kind];
      if (!fault) throw new Error(`docker double cannot produce ${kind}`);
      if (kind === 'Unavailable' && primitive !== 'create') throw new Error('docker: Unavailable comes from create only');
      server.arm(ROUTE[primitive], fault);
    },
    close: () => server.close(),
  };
}
