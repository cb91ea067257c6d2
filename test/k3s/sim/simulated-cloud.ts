/**
 * SIMULATED K3S HOSTS. `SimulatedK3sCloud` wraps the local cloud (a real sshd per instance on
 * 127.0.0.1) and reports `k8s: true` with the boot-script / open-ports capabilities a test asks
 * for. Every instance gets a host directory standing in for its root filesystem; its SSH sessions
 * run with `GPUPROV_ROOT_PREFIX` pointing there and simulated `systemctl`, `cloud-init` and
 * (on GPU hosts) `nvidia-smi` first on PATH. The REAL installer runs there, with only its
 * download step replaced (`install-k3s-sim.sh` installs the `k3s-double.mjs` test double).
 * A fixture metadata service on 127.0.0.1 answers the AWS IMDSv2 public-IP lookup. With
 * `realApi`, the k3s installed is `k3s-real.mjs`: the real kube-apiserver on the suite's etcd.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { renderShellScript, shQuote } from '../../../src/providers/cloud-init';
import { LocalProvider } from '../../../src/providers/local';
import { freePort } from '../../../src/ports';

export { freePort };
import type { Capabilities, CloudProvider, InstanceSpec, Json, Location, Observed, Offer, Owned, ResourceRequest } from '../../../src/core/provider';

const SIM_DIR = __dirname;

/** What one simulated host is like. */
export interface SimHost {
  /** The hardware has a GPU (`nvidia-smi` works). */
  gpu?: boolean;
  /** The metadata service knows the public IP (else the boot install cannot learn it). */
  metadata?: boolean;
  /**
   * What the boot route does (clouds with `bootScript`): `normal`; `fail` (download fails once);
   * `hang` (download hangs once); `skip` (cloud-init finishes without running the installer).
   */
  boot?: 'normal' | 'fail' | 'hang' | 'skip';
}

/** The real Kubernetes API server the hosts' k3s runs (test/k3s/real-api.test.ts). */
export interface RealApi {
  /** The kube-apiserver binary. */
  apiserver: string;
  /** The etcd client URL (each host keeps its objects under a prefix of its own). */
  etcd: string;
}

export interface SimHostState {
  dir: string;
  /** Runs of the (simulated) k3s download step. */
  installs: number;
  k3sStarts: number;
  k3sRestarts: number;
  marker: string;
}

function lines(file: string): number {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

/** Stop a process and its descendants, by pid (only processes this simulation started). */
function killTree(pid: number): void {
  let children: number[] = [];
  try {
    children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    children = [];
  }
  for (const c of children) killTree(c);
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

function pidIn(file: string): number | undefined {
  const n = Number(existsSync(file) ? readFileSync(file, 'utf8').trim() : '');
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export class SimulatedK3sCloud implements CloudProvider {
  readonly inner: LocalProvider;
  private readonly hosts = new Map<string, SimHost>();
  private readonly dirs = new Map<string, string>();
  private readonly metadataIps = new Map<string, string>();
  private metadata?: Server;
  private metadataPort = 0;

  constructor(
    readonly name: string,
    private readonly root: string,
    private readonly caps: { bootScript: boolean; openPorts: boolean },
    private readonly realApi?: RealApi,
  ) {
    this.inner = new LocalProvider({ root: join(root, 'cloud') });
    mkdirSync(join(root, 'hosts'), { recursive: true });
  }

  /** How the host of VM `vmName` will behave (set before starting it). */
  host(vmName: string, h: SimHost): void {
    this.hosts.set(vmName, h);
  }

  /** The host directory and counters of the instance the VM runs on. */
  state(vmName: string): SimHostState {
    const dir = this.dirs.get(vmName);
    if (!dir) throw new Error(`no simulated host for ${vmName}`);
    const marker = join(dir, 'root/var/lib/gpuprov/k3s-install.status');
    return {
      dir,
      installs: lines(join(dir, 'sim/install-count')),
      k3sStarts: lines(join(dir, 'sim/k3s-starts')),
      k3sRestarts: lines(join(dir, 'sim/k3s-restarts')),
      marker: existsSync(marker) ? readFileSync(marker, 'utf8') : '',
    };
  }

  capabilities(): Capabilities {
    return { ...this.inner.capabilities(), k8s: true, bootScript: this.caps.bootScript, openPorts: this.caps.openPorts };
  }

  async plan(req: ResourceRequest): Promise<Offer[]> {
    return (await this.inner.plan(req)).map((o) => ({ ...o, cloud: this.name }));
  }

  async prepare(offer: Offer, spec: InstanceSpec): Promise<Json> {
    return this.inner.prepare({ ...offer, cloud: 'local' }, spec);
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const h = this.hosts.get(spec.vmName) ?? {};
    const dir = await this.makeHost(spec.vmName, h);
    const session = join(dir, 'sim/session.sh');
    const keys = spec.publicKeys.map((k) => `command="${session}" ${k.trim()}`);
    const id = await this.inner.create({ ...offer, cloud: 'local' }, prepared, { ...spec, publicKeys: keys });
    writeFileSync(join(dir, 'sim/instance-id'), id);
    this.dirs.set(spec.vmName, dir);
    if (this.caps.bootScript && spec.bootScript) this.boot(dir, spec, h);
    return id;
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    return (await this.inner.observe({ ...at, cloud: 'local' }, vmName)).map((o) => ({ ...o, location: { ...o.location, cloud: this.name } }));
  }

  async inventory(at: Location): Promise<Owned[]> {
    return (await this.inner.inventory({ ...at, cloud: 'local' })).map((o) => ({ ...o, location: { ...o.location, cloud: this.name } }));
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const dir = this.dirs.get(vmName);
    if (dir) this.stopHost(dir);
    await this.inner.delete({ ...at, cloud: 'local' }, vmName, ids);
  }

  async cleanup(at: Location, vmName: string): Promise<void> {
    await this.inner.cleanup({ ...at, cloud: 'local' }, vmName);
  }

  /** Stop every simulated process and the metadata service. */
  async close(): Promise<void> {
    for (const dir of this.dirs.values()) this.stopHost(dir);
    await new Promise<void>((r) => (this.metadata ? this.metadata.close(() => r()) : r()));
  }

  /** Fixture IMDSv2: PUT /<host>/latest/api/token, GET /<host>/latest/meta-data/public-ipv4. */
  private async metadataBase(): Promise<string> {
    if (!this.metadata) {
      this.metadata = createHttpServer((req, res) => {
        const [, host = '', ...rest] = (req.url ?? '').split('/');
        const path = `/${rest.join('/')}`;
        if (req.method === 'PUT' && path === '/latest/api/token') {
          res.writeHead(200, { 'content-type': 'text/plain' }).end(`token-${host}`);
          return;
        }
        const ip = this.metadataIps.get(host);
        if (req.method === 'GET' && path === '/latest/meta-data/public-ipv4' && req.headers['x-aws-ec2-metadata-token'] === `token-${host}` && ip) {
          res.writeHead(200, { 'content-type': 'text/plain' }).end(ip);
          return;
        }
        res.writeHead(404, { 'content-type': 'text/html' }).end('<?xml version="1.0" encoding="iso-8859-1"?><title>404 - Not Found</title>');
      });
      await new Promise<void>((r) => this.metadata!.listen(0, '127.0.0.1', () => r()));
      this.metadataPort = (this.metadata.address() as AddressInfo).port;
    }
    return `http://127.0.0.1:${this.metadataPort}`;
  }

  private async makeHost(vmName: string, h: SimHost): Promise<string> {
    const dir = mkdtempSync(join(this.root, 'hosts', `${vmName}-`));
    const token = dir.split('/').pop()!;
    mkdirSync(join(dir, 'root'), { recursive: true });
    mkdirSync(join(dir, 'sim/bin'), { recursive: true });
    copyFileSync(join(SIM_DIR, 'stubs/systemctl'), join(dir, 'sim/bin/systemctl'));
    if (this.caps.bootScript) copyFileSync(join(SIM_DIR, 'stubs/cloud-init'), join(dir, 'sim/bin/cloud-init'));
    if (h.gpu) copyFileSync(join(SIM_DIR, 'stubs/nvidia-smi'), join(dir, 'sim/bin/nvidia-smi'));
    if (h.metadata !== false) this.metadataIps.set(token, '127.0.0.1');
    if (h.boot === 'fail') writeFileSync(join(dir, 'sim/fail-install-once'), '');
    if (h.boot === 'hang') writeFileSync(join(dir, 'sim/hang-install-once'), '');
    const env: Record<string, string> = {
      GPUPROV_SIM_HOST: dir,
      GPUPROV_ROOT_PREFIX: join(dir, 'root'),
      GPUPROV_K3S_INSTALL_CMD: join(SIM_DIR, 'install-k3s-sim.sh'),
      GPUPROV_NVIDIA_INSTALL_CMD: `echo x >> ${shQuote(join(dir, 'sim/nvidia-installs'))}`,
      GPUPROV_METADATA_BASE: `${await this.metadataBase()}/${token}`,
      GPUPROV_LOCK_WAIT: '60',
      K3S_API_PORT: String(await freePort()),
      ...(this.realApi
        ? { GPUPROV_SIM_K3S: join(SIM_DIR, 'k3s-real.mjs'), GPUPROV_SIM_KUBE_APISERVER: this.realApi.apiserver, GPUPROV_SIM_ETCD: this.realApi.etcd }
        : {}),
    };
    const exports = Object.entries(env).map(([k, v]) => `export ${k}=${shQuote(v)}`);
    exports.push(`export PATH=${shQuote(`${dir}/root/usr/local/bin:${dir}/sim/bin`)}:"$PATH"`);
    writeFileSync(join(dir, 'sim/env.sh'), `${exports.join('\n')}\n`);
    writeFileSync(
      join(dir, 'sim/session.sh'),
      `#!/bin/bash\n# SIMULATED K3S HOST: every SSH session of this instance runs on the host directory.\n. ${shQuote(join(dir, 'sim/env.sh'))}\n` +
        'if [ -n "${SSH_ORIGINAL_COMMAND:-}" ]; then exec bash -c "$SSH_ORIGINAL_COMMAND"; else exec bash -l; fi\n',
      { mode: 0o755 },
    );
    return dir;
  }

  /** The cloud's boot hook: cloud-init `running`, the rendered boot script, then `done`. */
  private boot(dir: string, spec: InstanceSpec, h: SimHost): void {
    writeFileSync(join(dir, 'sim/boot.sh'), renderShellScript(spec.bootScript!), { mode: 0o700 });
    const status = shQuote(join(dir, 'sim/cloud-init-status'));
    const run = h.boot === 'skip' ? 'true' : `bash ${shQuote(join(dir, 'sim/boot.sh'))} > ${shQuote(join(dir, 'sim/boot.log'))} 2>&1`;
    const script = `. ${shQuote(join(dir, 'sim/env.sh'))}; echo running > ${status}; ${run}; echo done > ${status}`;
    const child = spawn('bash', ['-c', script], { detached: true, stdio: 'ignore' });
    child.unref();
    if (child.pid !== undefined) writeFileSync(join(dir, 'sim/boot.pid'), String(child.pid));
  }

  private stopHost(dir: string): void {
    const boot = pidIn(join(dir, 'sim/boot.pid'));
    if (boot !== undefined) killTree(boot);
    const k3s = pidIn(join(dir, 'sim/k3s.pid'));
    if (k3s !== undefined) killTree(k3s);
  }
}
