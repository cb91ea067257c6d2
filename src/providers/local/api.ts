/**
 * The local cloud's "API": state directories under the root and the sshd processes they
 * describe. With `sshd.ts` (which server, and starting it), the only file that touches the
 * filesystem or starts processes. An instance's sshd is OpenSSH's or, where that is missing,
 * gpuprov's built-in server (src/ssh/builtin-sshd.ts).
 *
 *   <root>/instances/<id>/   labels.json, host key, authorized_keys, sshd_config, sshd.log, port, pid
 *   <root>/trash/<id>.<ms>.<rnd>/ an instance being deleted (moved first, so observe never sees it half-gone)
 *   <root>/vms/<region>/<vm>/keys/<sha256(idempotencyKey)>   the instance id a create key made
 *   <root>/faults-state/     fault `times` counters
 */
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import type { InstanceSpec, Offer } from '../../core/provider';
import { createKeyOf } from '../create-key';
import { classify } from './errors';
import { renderSshdConfig, type InstanceRecord, type ProcessState } from './map';
import { freePort } from '../../ports';
import { acceptsTcp, isSshdOf, killSshd } from './procs';
import { chooseSshd, makeHostKey, startSshd, type Sshd } from './sshd';

/** A create that has not recorded a pid after this long crashed half-way. */
const ABANDONED_AFTER_MS = 30_000;
const ID_RE = /^lc-[0-9a-f]{12}$/;

const labelsSchema = z.object({
  vmName: z.string(),
  owner: z.string(),
  region: z.string(),
  instanceType: z.string(),
  idempotencyKey: z.string(),
  createdAt: z.string(),
  /** Set by a boot-delay fault: Pending until createdAt + this. */
  bootDelayMs: z.number().optional(),
});
export type Labels = z.infer<typeof labelsSchema>;

export type { SshdMode } from './sshd';

/** A VM name as one safe path segment (no `/`, no `..`). */
function segment(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function writeAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, path);
}

/** Every LocalApi call leaves with a ProviderError (`classify`), never a raw fs or process error. */
async function classified<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw classify(err, what);
  }
}

export class LocalApi {
  readonly root: string;
  private sshd: Sshd | undefined;

  /** `sshdPath` pins OpenSSH's binary (unless `mode` is builtin); else `mode` decides. */
  constructor(
    root: string,
    private readonly mode: string = 'auto',
    private readonly sshdPath?: string,
  ) {
    this.root = resolve(root);
  }

  private dirOf(id: string): string {
    return join(this.root, 'instances', id);
  }

  private configOf(id: string): string {
    return join(this.dirOf(id), 'sshd_config');
  }

  /** A VM's side state (idempotency claims) of one deployment: two deployments' `gpu1` never share it. */
  vmDir(region: string, vmName: string, owner: string): string {
    return join(this.root, 'vms', segment(region), segment(owner), segment(vmName));
  }

  /** Decide the instances' SSH server once (see `chooseSshd`). */
  async ensureBinaries(): Promise<Sshd> {
    return classified('ensureBinaries', async () => (this.sshd ??= await chooseSshd(this.mode, this.sshdPath)));
  }

  async ensureVmDir(region: string, vmName: string, owner: string): Promise<void> {
    return classified('ensureVmDir', async () => {
      await mkdir(join(this.vmDir(region, vmName, owner), 'keys'), { recursive: true });
    });
  }

  async removeVmDir(region: string, vmName: string, owner: string): Promise<void> {
    return classified('removeVmDir', async () => {
      await rm(this.vmDir(region, vmName, owner), { recursive: true, force: true });
    });
  }

  /** Every instance directory with readable labels. */
  async list(): Promise<{ id: string; labels: Labels }[]> {
    return classified('list', async () => {
      let ids: string[];
      try {
        ids = (await readdir(join(this.root, 'instances'))).filter((n) => ID_RE.test(n));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw err;
      }
      const out = await Promise.all(ids.map(async (id) => ({ id, labels: await this.labels(id) })));
      return out.filter((x): x is { id: string; labels: Labels } => x.labels !== undefined);
    });
  }

  /** Labels of one instance; undefined when it is gone or not yet labelled. */
  async labels(id: string): Promise<Labels | undefined> {
    return classified('labels', async () => {
      if (!ID_RE.test(id)) return undefined;
      const text = await readText(join(this.dirOf(id), 'labels.json'));
      if (text === undefined) return undefined;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return undefined; // not ours or hand-edited: not an instance
      }
      const parsed = labelsSchema.safeParse(json);
      return parsed.success ? parsed.data : undefined;
    });
  }

  private async pidOf(dir: string): Promise<number | undefined> {
    const text = (await readText(join(dir, 'pid'))) ?? (await readText(join(dir, 'sshd.pid')));
    const pid = Number(text?.trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }

  private async processState(id: string, labels: Labels, now: number): Promise<ProcessState> {
    const createdAt = Date.parse(labels.createdAt);
    const pid = await this.pidOf(this.dirOf(id));
    if (pid === undefined) return now - createdAt > ABANDONED_AFTER_MS ? 'abandoned' : 'starting';
    if (!isSshdOf(pid, this.configOf(id))) return 'exited';
    if (now < createdAt + (labels.bootDelayMs ?? 0)) return 'booting';
    const port = await this.port(id);
    return port !== undefined && (await acceptsTcp(port)) ? 'listening' : 'booting';
  }

  private async port(id: string): Promise<number | undefined> {
    const port = Number((await readText(join(this.dirOf(id), 'port')))?.trim());
    return Number.isInteger(port) && port > 0 ? port : undefined;
  }

  /** Disk + process-table view of one instance. */
  async record(id: string, labels: Labels): Promise<InstanceRecord> {
    return classified('record', async () => {
      const state = await this.processState(id, labels, Date.now());
      const rec: InstanceRecord = { id, region: labels.region, instanceType: labels.instanceType, state, createKey: createKeyOf(labels.idempotencyKey) };
      const port = await this.port(id);
      if (port !== undefined) rec.port = port;
      if (state === 'exited') {
        const log = (await readText(join(this.dirOf(id), 'sshd.log'))) ?? '';
        const last = log.trim().split('\n').pop();
        if (last) rec.logTail = last.slice(0, 200);
      }
      return rec;
    });
  }

  /** True when the instance exists and is not Failed (starting, booting or listening). */
  private async isLive(id: string): Promise<boolean> {
    const labels = await this.labels(id);
    if (!labels) return false;
    const state = await this.processState(id, labels, Date.now());
    return state === 'starting' || state === 'booting' || state === 'listening';
  }

  /**
   * Record `id` as the instance of this idempotency key; when a live instance already holds
   * the key, return its id instead (the caller then drops its own half-made directory).
   */
  private async claimKey(labels: Labels, id: string): Promise<string> {
    const dir = join(this.vmDir(labels.region, labels.vmName, labels.owner), 'keys');
    await mkdir(dir, { recursive: true });
    const file = join(dir, createHash('sha256').update(labels.idempotencyKey).digest('hex'));
    try {
      const fh = await open(file, 'wx');
      await fh.writeFile(id);
      await fh.close();
      return id;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const held = ((await readText(file)) ?? '').trim();
    if (held !== '' && (await this.isLive(held))) return held;
    await writeAtomic(file, id);
    return id;
  }

  /**
   * Make one instance: state directory, host key, config, then sshd detached so it outlives
   * this process. Returns the id of the instance holding the idempotency key.
   */
  async create(offer: Offer, spec: InstanceSpec, bootDelayMs: number | undefined): Promise<string> {
    return classified('create', async () => {
      const id = `lc-${randomBytes(6).toString('hex')}`;
      const dir = this.dirOf(id);
      const labels: Labels = {
        vmName: spec.vmName,
        owner: spec.owner,
        region: offer.region,
        instanceType: offer.instanceType,
        idempotencyKey: spec.idempotencyKey,
        createdAt: new Date().toISOString(),
      };
      if (bootDelayMs !== undefined) labels.bootDelayMs = bootDelayMs;
      await mkdir(dir, { recursive: true });
      // Labels first: from here on, delete-by-identity finds this instance whatever happens next.
      await writeAtomic(join(dir, 'labels.json'), `${JSON.stringify(labels, null, 2)}\n`);
      const owner = await this.claimKey(labels, id);
      if (owner !== id) {
        await rm(dir, { recursive: true, force: true });
        return owner;
      }
      const sshd = await this.ensureBinaries();
      await makeHostKey(sshd, join(dir, 'ssh_host_ed25519_key'), `gpuprov-local-${id}`);
      await writeFile(join(dir, 'authorized_keys'), spec.publicKeys.map((k) => `${k.trim()}\n`).join(''), { mode: 0o600 });
      const port = await freePort();
      await writeFile(join(dir, 'port'), `${port}\n`);
      await writeFile(join(dir, 'sshd_config'), renderSshdConfig(dir, port));
      const pid = await startSshd(sshd, this.configOf(id), join(dir, 'sshd.log'));
      await writeFile(join(dir, 'pid'), `${pid}\n`);
      return id;
    });
  }

  /**
   * Delete one instance: move its directory to trash (observe stops seeing it), stop its
   * sshd, remove the directory. Unknown or already gone ids succeed.
   */
  async remove(id: string): Promise<void> {
    return classified('remove', async () => {
      if (!ID_RE.test(id)) return;
      const trash = join(this.root, 'trash');
      await mkdir(trash, { recursive: true });
      const moved = join(trash, `${id}.${Date.now()}.${randomBytes(4).toString('hex')}`);
      try {
        await rename(this.dirOf(id), moved);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
      await this.purge(id, moved);
    });
  }

  private async purge(id: string, moved: string): Promise<void> {
    const pid = await this.pidOf(moved);
    // sshd's command line still names the config at its original place.
    if (pid !== undefined && !(await killSshd(pid, this.configOf(id)))) {
      throw new ProviderError('Transient', `local: sshd ${pid} of ${id} has not exited yet after SIGKILL`);
    }
    await rm(moved, { recursive: true, force: true });
  }

  /** Finish deletes that a crashed process left in trash (their sshd may still run). */
  async sweepTrash(): Promise<void> {
    return classified('sweepTrash', async () => {
      const trash = join(this.root, 'trash');
      if (!existsSync(trash)) return;
      for (const name of await readdir(trash)) {
        const [id = '', movedAt = ''] = name.split('.');
        // A delete in flight in another process owns its entry for a moment; leave it to it.
        if (ID_RE.test(id) && Date.now() - Number(movedAt) > 5_000) await this.purge(id, join(trash, name));
      }
    });
  }
}
