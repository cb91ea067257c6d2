/**
 * The SFTP subsystem of the built-in SSH server (what `sftp` and, since OpenSSH 9, `scp` use):
 * SFTP v3 over the local filesystem as the serving user, relative paths from its home. No
 * extensions are advertised, so clients fall back to the plain requests.
 */
import { constants as C, promises as fs, type Stats } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { utils, type Attributes, type FileEntry, type SFTPWrapper } from 'ssh2';

const { OPEN_MODE, STATUS_CODE } = utils.sftp;
/** Directory entries per READDIR answer (keeps each reply well under the 32 KiB packet limit). */
const NAMES_PER_REPLY = 64;

/** SFTP open flags → open(2) flags (any combination: scp opens WRITE|CREAT, then truncates). */
function openFlags(f: number): number {
  const rw = f & OPEN_MODE.READ && f & OPEN_MODE.WRITE ? C.O_RDWR : f & OPEN_MODE.WRITE ? C.O_WRONLY : C.O_RDONLY;
  const bits: [number, number][] = [
    [OPEN_MODE.APPEND, C.O_APPEND],
    [OPEN_MODE.CREAT, C.O_CREAT],
    [OPEN_MODE.TRUNC, C.O_TRUNC],
    [OPEN_MODE.EXCL, C.O_EXCL],
  ];
  return bits.reduce((acc, [sftp, os]) => (f & sftp ? acc | os : acc), rw);
}

type Handle = { kind: 'file'; fh: fs.FileHandle } | { kind: 'dir'; path: string; names?: string[] };

function attrsOf(st: Stats): Attributes {
  return { mode: st.mode, uid: st.uid, gid: st.gid, size: st.size, atime: Math.floor(st.atimeMs / 1000), mtime: Math.floor(st.mtimeMs / 1000) };
}

const TYPE_CHAR: [number, string][] = [
  [0o040000, 'd'],
  [0o120000, 'l'],
  [0o020000, 'c'],
  [0o060000, 'b'],
  [0o010000, 'p'],
  [0o140000, 's'],
];

/** The `ls -l` line `sftp`'s `ls -l` prints. */
function longname(name: string, st: Stats): string {
  const type = TYPE_CHAR.find(([bits]) => (st.mode & 0o170000) === bits)?.[1] ?? '-';
  const rwx = [6, 3, 0].map((s) => ['r', 'w', 'x'].map((c, i) => ((st.mode >> s) & (4 >> i) ? c : '-')).join('')).join('');
  const date = st.mtime.toDateString().slice(4);
  return `${type}${rwx} ${st.nlink} ${st.uid} ${st.gid} ${st.size} ${date} ${name}`;
}

function statusOf(err: unknown): [number, string] {
  const code = (err as NodeJS.ErrnoException).code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'ENOENT') return [STATUS_CODE.NO_SUCH_FILE, message];
  if (code === 'EACCES' || code === 'EPERM') return [STATUS_CODE.PERMISSION_DENIED, message];
  return [STATUS_CODE.FAILURE, message];
}

async function setAttrs(path: string | fs.FileHandle, a: Partial<Attributes>): Promise<void> {
  const h = typeof path === 'string' ? undefined : path;
  if (a.size !== undefined) await (h ? h.truncate(a.size) : fs.truncate(path as string, a.size));
  if (a.mode !== undefined) await (h ? h.chmod(a.mode & 0o7777) : fs.chmod(path as string, a.mode & 0o7777));
  if (a.uid !== undefined && a.gid !== undefined) await (h ? h.chown(a.uid, a.gid) : fs.chown(path as string, a.uid, a.gid));
  if (a.atime !== undefined && a.mtime !== undefined) await (h ? h.utimes(a.atime, a.mtime) : fs.utimes(path as string, a.atime, a.mtime));
}

/** One channel's open handles and request queue, shared by its request handlers. */
interface Session {
  readonly sftp: SFTPWrapper;
  readonly handles: Map<number, Handle>;
  /** A client path, relative to home unless absolute. */
  readonly at: (p: string) => string;
  /** Registers a handle; returns its wire form. */
  readonly open: (h: Handle) => Buffer;
  readonly lookup: (b: Buffer) => Handle | undefined;
  /** Queue one request; any error becomes its status reply. */
  readonly serve: (id: number, work: () => Promise<void>) => void;
  readonly ok: (id: number) => void;
  /** The open file a handle names; EBADF otherwise. */
  readonly file: (b: Buffer) => fs.FileHandle;
}

function sessionOf(sftp: SFTPWrapper, home: string): Session {
  const handles = new Map<number, Handle>();
  let next = 1;
  // One request at a time, replies in request order, as OpenSSH's sftp-server does: OpenSSH's
  // scp/sftp track the highest contiguous offset acknowledged and truncate the file there when
  // replies come back reordered.
  let queue = Promise.resolve();
  const lookup = (b: Buffer): Handle | undefined => (b.length === 4 ? handles.get(b.readUInt32BE(0)) : undefined);
  return {
    sftp,
    handles,
    at: (p) => resolve(isAbsolute(p) ? p : join(home, p)),
    open: (h) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(next);
      handles.set(next++, h);
      return b;
    },
    lookup,
    serve: (id, work) => {
      queue = queue.then(work).catch((err: unknown) => sftp.status(id, ...statusOf(err)));
    },
    ok: (id) => sftp.status(id, STATUS_CODE.OK),
    file: (b) => {
      const h = lookup(b);
      if (h?.kind !== 'file') throw Object.assign(new Error('invalid handle'), { code: 'EBADF' });
      return h.fh;
    },
  };
}

/** OPEN, READ, WRITE, FSTAT, FSETSTAT, CLOSE: requests on file handles. */
function serveFiles({ sftp, handles, at, open, lookup, serve, ok, file }: Session): void {
  sftp.on('OPEN', (id, path, flags, attrs: Partial<Attributes>) =>
    serve(id, async () => {
      sftp.handle(id, open({ kind: 'file', fh: await fs.open(at(path), openFlags(flags), attrs.mode ?? 0o644) }));
    }),
  );
  sftp.on('READ', (id, h, offset, len) =>
    serve(id, async () => {
      const buf = Buffer.alloc(len);
      const { bytesRead } = await file(h).read(buf, 0, len, offset);
      if (bytesRead === 0) sftp.status(id, STATUS_CODE.EOF);
      else sftp.data(id, buf.subarray(0, bytesRead));
    }),
  );
  sftp.on('WRITE', (id, h, offset, data) => {
    const copy = Buffer.from(data); // ssh2 hands a view of its packet buffer, which it reuses
    serve(id, async () => (await file(h).write(copy, 0, copy.length, offset), ok(id)));
  });
  sftp.on('FSTAT', (id, h) => serve(id, async () => sftp.attrs(id, attrsOf(await file(h).stat()))));
  sftp.on('FSETSTAT', (id, h, attrs: Partial<Attributes>) => serve(id, async () => (await setAttrs(file(h), attrs), ok(id))));
  sftp.on('CLOSE', (id, b) =>
    serve(id, async () => {
      const h = lookup(b);
      if (!h) return sftp.status(id, STATUS_CODE.FAILURE, 'invalid handle');
      handles.delete(b.readUInt32BE(0));
      if (h.kind === 'file') await h.fh.close();
      ok(id);
    }),
  );
}

/** OPENDIR, READDIR: directory listing (CLOSE is shared with files). */
function serveDirs({ sftp, at, open, lookup, serve }: Session): void {
  sftp.on('OPENDIR', (id, path) =>
    serve(id, async () => {
      const dir = at(path);
      if (!(await fs.stat(dir)).isDirectory()) return sftp.status(id, STATUS_CODE.FAILURE, `${path}: not a directory`);
      sftp.handle(id, open({ kind: 'dir', path: dir }));
    }),
  );
  sftp.on('READDIR', (id, b) =>
    serve(id, async () => {
      const h = lookup(b);
      if (h?.kind !== 'dir') return sftp.status(id, STATUS_CODE.FAILURE, 'invalid handle');
      h.names ??= ['.', '..', ...(await fs.readdir(h.path))];
      const batch = h.names.splice(0, NAMES_PER_REPLY);
      if (batch.length === 0) return sftp.status(id, STATUS_CODE.EOF);
      const entries: FileEntry[] = [];
      for (const name of batch) {
        const st = await fs.lstat(join(h.path, name)).catch(() => undefined);
        if (st) entries.push({ filename: name, longname: longname(name, st), attrs: attrsOf(st) });
      }
      sftp.name(id, entries);
    }),
  );
}

/** STAT … SYMLINK: requests that name a path. */
function servePaths({ sftp, at, serve, ok }: Session): void {
  sftp.on('STAT', (id, path) => serve(id, async () => sftp.attrs(id, attrsOf(await fs.stat(at(path))))));
  sftp.on('LSTAT', (id, path) => serve(id, async () => sftp.attrs(id, attrsOf(await fs.lstat(at(path))))));
  sftp.on('SETSTAT', (id, path, attrs: Partial<Attributes>) => serve(id, async () => (await setAttrs(at(path), attrs), ok(id))));
  sftp.on('REMOVE', (id, path) => serve(id, async () => (await fs.unlink(at(path)), ok(id))));
  sftp.on('RMDIR', (id, path) => serve(id, async () => (await fs.rmdir(at(path)), ok(id))));
  sftp.on('MKDIR', (id, path, attrs: Partial<Attributes>) => serve(id, async () => (await fs.mkdir(at(path), attrs.mode ?? 0o777), ok(id))));
  sftp.on('RENAME', (id, from, to) => serve(id, async () => (await fs.rename(at(from), at(to)), ok(id))));
  sftp.on('REALPATH', (id, path) => serve(id, async () => sftp.name(id, [{ filename: at(path), longname: at(path), attrs: {} as Attributes }])));
  sftp.on('READLINK', (id, path) =>
    serve(id, async () => {
      const target = await fs.readlink(at(path));
      sftp.name(id, [{ filename: target, longname: target, attrs: {} as Attributes }]);
    }),
  );
  // With OpenSSH's client (which swaps the draft's order) ssh2 hands over the link first.
  sftp.on('SYMLINK', (id, link, target) => serve(id, async () => (await fs.symlink(target, at(link)), ok(id))));
}

/** EXTENDED (refused), and the channel's end, error and close. */
function serveLifecycle({ sftp, handles }: Session): void {
  sftp.on('EXTENDED', (id) => sftp.status(id, STATUS_CODE.OP_UNSUPPORTED));
  // The client's EOF ends the subsystem, as OpenSSH's sftp-server exits on it. OpenSSH's ssh
  // then wants an exit status (else it exits 255 and scp reports failure); ssh2's SFTP object
  // has no exit(), so it goes through the channel's protocol as Channel.exit() does (ssh2 1.17).
  sftp.on('end', () => {
    const ch = sftp as unknown as { _protocol?: { exitStatus?: (chan: number, code: number) => void }; outgoing?: { id: number; state: string } };
    if (ch.outgoing?.state === 'open') ch._protocol?.exitStatus?.(ch.outgoing.id, 0);
    sftp.end();
  });
  sftp.on('error', () => sftp.end()); // a malformed packet: end this subsystem, not the server
  sftp.on('close', () => {
    for (const h of handles.values()) if (h.kind === 'file') void h.fh.close().catch(() => undefined);
    handles.clear();
  });
}

/** Answer the requests of one SFTP channel until it closes. */
export function serveSftp(sftp: SFTPWrapper, home: string): void {
  const session = sessionOf(sftp, home);
  serveFiles(session);
  serveDirs(session);
  servePaths(session);
  serveLifecycle(session);
}
