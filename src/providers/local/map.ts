import type { InstanceStatus, Observed, Offer } from '../../core/provider';

export const CLOUD = 'local';

/** Regions in plan order. */
export const REGIONS = ['local-a', 'local-b'] as const;

interface InstanceType {
  name: string;
  vcpus: number;
  memoryGiB: number;
  pricePerHour: number;
  gpu?: { model: string; count: number; memoryGiB: number };
}

/** When the catalogue's (simulated) prices were set; offers carry it as a `catalog` price. */
export const PRICE_DATE = '2026-11-30';

/** The catalogue; the same in every region. `gpu-sim-1` is a fake GPU so GPU requests plan. */
export const INSTANCE_TYPES: readonly InstanceType[] = [
  { name: 'cpu-small', vcpus: 1, memoryGiB: 1, pricePerHour: 0.01 },
  { name: 'cpu-large', vcpus: 4, memoryGiB: 8, pricePerHour: 0.02 },
  { name: 'gpu-sim-1', vcpus: 4, memoryGiB: 16, pricePerHour: 0.1, gpu: { model: 'SIM', count: 1, memoryGiB: 1 } },
];

function toOffer(region: string, t: InstanceType): Offer {
  const o: Offer = {
    cloud: CLOUD,
    region,
    instanceType: t.name,
    vcpus: t.vcpus,
    memoryGiB: t.memoryGiB,
    pricePerHour: t.pricePerHour,
    currency: 'USD',
    priceSource: 'catalog',
    pricedAt: PRICE_DATE,
  };
  if (t.gpu) o.gpu = { ...t.gpu };
  return o;
}

/**
 * Every offer, cheapest first, then region order (local-a, local-b); `planOffers` keeps the ones
 * that match the request. `req.k8s` is not a filter: whether k3s runs is the workflow's call,
 * from `capabilities().k8s`.
 */
export function listOffers(): Offer[] {
  const offers = REGIONS.flatMap((r) => INSTANCE_TYPES.map((t) => toOffer(r, t)));
  const regionRank = (r: string): number => (REGIONS as readonly string[]).indexOf(r);
  return offers.sort((a, b) => (a.pricePerHour ?? 0) - (b.pricePerHour ?? 0) || regionRank(a.region) - regionRank(b.region));
}

export function isKnownOffer(o: Offer): boolean {
  return o.cloud === CLOUD && (REGIONS as readonly string[]).includes(o.region) && INSTANCE_TYPES.some((t) => t.name === o.instanceType);
}

/** What the state directory and the process table say about one instance. */
export type ProcessState =
  /** Create has not written the pid yet. */
  | 'starting'
  /** No pid long after create: the create crashed half-way. */
  | 'abandoned'
  /** sshd is alive but not accepting yet (or a boot-delay fault holds it). */
  | 'booting'
  /** sshd is alive and accepts TCP on its port. */
  | 'listening'
  /** sshd is gone but its state directory is not deleted. */
  | 'exited';

const STATUS: Record<ProcessState, InstanceStatus> = {
  starting: 'Pending',
  abandoned: 'Failed',
  booting: 'Pending',
  listening: 'Running',
  exited: 'Failed',
};

const REASON: Partial<Record<ProcessState, string>> = {
  abandoned: 'create did not finish (no sshd pid recorded)',
  exited: 'sshd exited',
};

/** One instance as read from disk and /proc. */
export interface InstanceRecord {
  id: string;
  region: string;
  instanceType: string;
  state: ProcessState;
  port?: number;
  /** Last line of the sshd log, for Failed reasons. */
  logTail?: string;
  /** sha256 (hex) of the idempotency key that created it. */
  createKey?: string;
}

export function toObserved(rec: InstanceRecord, user: string): Observed {
  const status = STATUS[rec.state];
  const o: Observed = { id: rec.id, status, location: { cloud: CLOUD, region: rec.region }, instanceType: rec.instanceType };
  const reason = REASON[rec.state];
  if (reason !== undefined) o.reason = rec.logTail ? `${reason}: ${rec.logTail}` : reason;
  if (status === 'Running' && rec.port !== undefined) o.endpoint = { host: '127.0.0.1', port: rec.port, user };
  if (rec.createKey !== undefined) o.createKey = rec.createKey;
  return o;
}

/** sshd config of one instance: loopback only, keys only, everything under its state dir. */
export function renderSshdConfig(dir: string, port: number): string {
  return [
    '# gpuprov local cloud instance',
    'ListenAddress 127.0.0.1',
    `Port ${port}`,
    `HostKey ${dir}/ssh_host_ed25519_key`,
    `AuthorizedKeysFile ${dir}/authorized_keys`,
    `PidFile ${dir}/sshd.pid`,
    'StrictModes no',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    'PermitRootLogin prohibit-password',
    'UseDNS no',
    'PrintMotd no',
    'Subsystem sftp internal-sftp',
    // Hazard: bash runs the host user's ~/.bashrc for commands sent over SSH unless the shell is
    // nested (SHLVL ≥ 2). A VM does not carry the host's shell setup; one that hangs (a pyenv
    // rehash lock left by a killed session) stalled every probe at `connecting`.
    'SetEnv SHLVL=1',
    '',
  ].join('\n');
}
