/**
 * The only file that talks to the Docker Engine API: undici over the daemon's unix socket
 * (or a `tcp://` DOCKER_HOST), the API version negotiated once per engine, every response zod-parsed.
 */
import { Agent, request, type Dispatcher } from 'undici';
import { z } from 'zod';
import type { ProviderError } from '../../core/errors';
import { redactError } from '../redact';
import { classify as classifyDocker, DockerApiError, engineTooOld } from './errors';
import { negotiateApiVersion } from './api-version';

/** The daemon holds no key of ours: credential-shaped text (a registry token in a message) is still redacted. */
function classify(err: unknown, op: string, engine: string): ProviderError {
  return redactError(classifyDocker(err, op, engine));
}

export interface DockerApiOptions {
  /** Unix socket of the daemon (default `/var/run/docker.sock`). */
  socketPath?: string;
  /** `http://host:port` for a TCP daemon; takes precedence over the socket. */
  baseUrl?: string;
  timeoutMs?: number;
}

/** `GET /version` (unversioned): what the engine speaks. */
const Version = z.object({ ApiVersion: z.string(), MinAPIVersion: z.string().optional(), Version: z.string().optional() });
const Info = z.object({ NCPU: z.number(), MemTotal: z.number(), Name: z.string().optional(), ServerVersion: z.string().optional() });
export type Info = z.infer<typeof Info>;
const Image = z.object({ Id: z.string() });
const Created = z.object({ Id: z.string(), Warnings: z.array(z.string()).nullish() });
const Port = z.object({ IP: z.string().optional(), PrivatePort: z.number(), PublicPort: z.number().optional(), Type: z.string() });
export const ContainerSummary = z.object({
  Id: z.string(),
  Names: z.array(z.string()).nullish(),
  Image: z.string().optional(),
  State: z.string(),
  Status: z.string().optional(),
  Labels: z.record(z.string(), z.string()).nullish(),
  Ports: z.array(Port).nullish(),
});
export type ContainerSummary = z.infer<typeof ContainerSummary>;
const Inspect = z.object({
  Id: z.string(),
  Name: z.string().optional(),
  State: z.object({ Status: z.string() }).optional(),
  Config: z.object({ Labels: z.record(z.string(), z.string()).nullish() }).optional(),
});

/** The `POST /containers/create` body (the fields we set). */
export interface CreateBody {
  Image: string;
  Hostname: string;
  Labels: Record<string, string>;
  Env: string[];
  ExposedPorts: Record<string, Record<string, never>>;
  HostConfig: {
    PortBindings: Record<string, { HostIp: string; HostPort: string }[]>;
    NanoCpus?: number;
    Memory?: number;
    RestartPolicy: { Name: 'no' };
    Init: boolean;
  };
}

export class DockerApi {
  private readonly dispatcher: Dispatcher | undefined;
  private readonly origin: string;
  /** `DOCKER_HOST`-style address of the engine, for messages. */
  readonly engine: string;
  private version: Promise<string> | undefined;

  constructor(private readonly opts: DockerApiOptions) {
    if (opts.baseUrl) {
      this.origin = opts.baseUrl.replace(/\/$/, '');
      this.dispatcher = undefined;
      this.engine = this.origin;
    } else {
      this.origin = 'http://docker';
      const socketPath = opts.socketPath ?? '/var/run/docker.sock';
      this.dispatcher = new Agent({ connect: { socketPath } });
      this.engine = `unix://${socketPath}`;
    }
  }

  /**
   * The API version to speak: min(the engine's, the newest we speak), asked once per engine; below
   * the oldest we speak the engine is refused (Unavailable for the whole cloud). A failed ask is asked again next call.
   */
  private apiVersion(): Promise<string> {
    if (this.version) return this.version;
    const asked = this.call('version', 'GET', '/version', Version, undefined, true).then(({ data }) => {
      const v = negotiateApiVersion(data!.ApiVersion);
      if (!v) throw engineTooOld(this.engine, data!.ApiVersion, data!.Version);
      return v;
    });
    this.version = asked;
    asked.catch(() => {
      if (this.version === asked) this.version = undefined;
    });
    return asked;
  }

  /** One call under the negotiated version's `/vN` prefix (`unversioned`: the version ask itself). */
  private async call<T>(
    op: string,
    method: Dispatcher.HttpMethod,
    path: string,
    schema: z.ZodType<T> | undefined,
    body?: unknown,
    unversioned = false,
  ): Promise<{ status: number; data: T | undefined }> {
    const url = `${this.origin}${unversioned ? '' : `/v${await this.apiVersion()}`}${path}`;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method,
        ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        headersTimeout: this.opts.timeoutMs ?? 30_000,
        bodyTimeout: this.opts.timeoutMs ?? 30_000,
      });
    } catch (e) {
      throw classify(e, op, this.engine);
    }
    const text = await res.body.text();
    if (res.statusCode >= 400) {
      const msg = z.object({ message: z.string() }).safeParse(safeJson(text));
      const retry = res.headers['retry-after'];
      throw classify(
        new DockerApiError(op, res.statusCode, msg.success ? msg.data.message : text.slice(0, 200), typeof retry === 'string' ? retry : undefined),
        op,
        this.engine,
      );
    }
    if (!schema || res.statusCode === 204 || res.statusCode === 304) return { status: res.statusCode, data: undefined };
    const parsed = schema.safeParse(safeJson(text));
    if (!parsed.success) throw classify(new DockerApiError(op, 502, `unexpected response shape: ${parsed.error.issues[0]?.message ?? ''}`), op, this.engine);
    return { status: res.statusCode, data: parsed.data };
  }

  async info(): Promise<Info> {
    return (await this.call('info', 'GET', '/info', Info)).data!;
  }

  /** The image's id, or `undefined` when the daemon does not have it. */
  async imageId(ref: string): Promise<string | undefined> {
    try {
      return (await this.call('image', 'GET', `/images/${encodeURIComponent(ref)}/json`, Image)).data?.Id;
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  /** Create; a name clash answers `{ conflict: true }` (the caller adopts the existing container). */
  async createContainer(name: string, body: CreateBody): Promise<{ id: string } | { conflict: true }> {
    try {
      return { id: (await this.call('create', 'POST', `/containers/create?name=${encodeURIComponent(name)}`, Created, body)).data!.Id };
    } catch (e) {
      if (isStatus(e, 409)) return { conflict: true };
      throw e;
    }
  }

  /** Start; 304 (already started) is success. */
  async startContainer(id: string): Promise<void> {
    await this.call('start', 'POST', `/containers/${encodeURIComponent(id)}/start`, undefined);
  }

  async inspect(idOrName: string): Promise<z.infer<typeof Inspect> | undefined> {
    try {
      return (await this.call('inspect', 'GET', `/containers/${encodeURIComponent(idOrName)}/json`, Inspect)).data;
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  /** Every container (any state) carrying `label=value`. */
  async listByLabel(label: string, value: string): Promise<ContainerSummary[]> {
    const filters = encodeURIComponent(JSON.stringify({ label: [`${label}=${value}`] }));
    return (await this.call('list', 'GET', `/containers/json?all=true&filters=${filters}`, z.array(ContainerSummary))).data ?? [];
  }

  /** Force-remove with anonymous volumes; gone or already being removed is success. */
  async remove(id: string): Promise<void> {
    try {
      await this.call('remove', 'DELETE', `/containers/${encodeURIComponent(id)}?force=true&v=true`, undefined);
    } catch (e) {
      if (isStatus(e, 404)) return;
      // "removal of container … is already in progress"
      if (isStatus(e, 409)) return;
      throw e;
    }
  }

  async close(): Promise<void> {
    await this.dispatcher?.close();
  }
}

function isStatus(e: unknown, status: number): boolean {
  return (e as { cause?: unknown }).cause instanceof DockerApiError && (e as { cause: DockerApiError }).cause.status === status;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
