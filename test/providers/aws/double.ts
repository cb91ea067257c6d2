/**
 * The AWS test double: a fresh moto EC2 server plus an `AwsProvider` pointed at it.
 *
 * moto cannot run out of capacity, hit a quota or reject credentials, so errors are armed with
 * a middleware on the provider's EC2 clients that answers a chosen command with the real EC2
 * error response (XML body + HTTP status from test/fixtures/aws/errors.ts). The SDK's own
 * deserializer turns it into the `EC2ServiceException` the adapter classifies: an honest test
 * of classification, not of moto. A "lost response" can be armed too: the call reaches moto
 * (the instance is created) and the caller gets a network error instead.
 */
import { resolve } from 'node:path';
import { DescribeInstancesCommand, DescribeSecurityGroupsCommand, EC2Client } from '@aws-sdk/client-ec2';
import type { ErrorKind } from '../../../src/core/errors';
import { AwsProvider, type AwsProviderOptions } from '../../../src/providers/aws';
import type { CloudProvider } from '../../../src/core/provider';
import { CONFORMANCE_DEPLOYMENT, type Primitive } from '../conformance';
import { errorXml, fixtureFor } from '../../fixtures/aws/errors';
import { startMoto } from '../../harness/moto';

export const AMIS_PATH = resolve(__dirname, '../../fixtures/aws/amis.json');
export const REGION = 'us-east-1';

/** The EC2 code the double answers for each kind, and the command each primitive starts with. */
export const KIND_CODES: Record<ErrorKind, string> = {
  Capacity: 'InsufficientInstanceCapacity',
  Quota: 'VcpuLimitExceeded',
  Unavailable: 'Unsupported',
  Failed: 'InvalidAMIID.NotFound',
  InvalidRequest: 'IdempotentParameterMismatch',
  Credentials: 'AuthFailure',
  Transient: 'RequestLimitExceeded',
};
export const PRIMITIVE_COMMANDS: Record<Primitive, string> = {
  plan: 'DescribeInstanceTypeOfferings',
  prepare: 'DescribeVpcs',
  create: 'RunInstances',
  observe: 'DescribeInstances',
  delete: 'DescribeInstances',
  cleanup: 'DescribeSecurityGroups',
};

interface Armed {
  command: string;
  code?: string;
  /** Keep failing this command until another command is sent (every AZ of one create). */
  sticky: boolean;
  fired: boolean;
  /** Send to moto, then lose the response. */
  lose: boolean;
  /** Answer with this 200 body (an EC2 XML answer moto cannot give) instead of an error. */
  xml?: string;
}

export interface SentCommand {
  command: string;
  input: Record<string, unknown>;
}

export interface AwsDouble {
  provider: CloudProvider;
  url: string;
  /** A raw client on moto (us-east-1) for inspection. */
  ec2: EC2Client;
  /** Every command the provider sent, in order (name without `Command`). */
  sent: SentCommand[];
  countLive(): Promise<number>;
  /** gpuprov's security groups at moto, across deployments. */
  countSide(): Promise<number>;
  /** Answer the next `command` (e.g. 'RunInstances') with the fixture for `code`. */
  armCode(command: string, code: string, opts?: { sticky?: boolean }): void;
  /** Let the next `command` reach moto, then fail it as a dropped connection. */
  armLostResponse(command: string): void;
  /** Answer `command` with this EC2 XML (HTTP 200) without asking moto: once, or every time with `sticky`. */
  answer(command: string, xml: string, opts?: { sticky?: boolean }): void;
  /**
   * Answer every command `server` serves (it returns an XML body or an EC2 error code; undefined:
   * not its command) without asking moto, until cleared (`undefined`); armed answers go first.
   */
  serve(server: ((command: string, input: Record<string, unknown>) => { xml: string } | { error: string } | undefined) | undefined): void;
  /** Rewrite moto's XML answer to every `command` until cleared (`undefined`). */
  rewrite(command: string, edit: ((xml: string) => string) | undefined): void;
  /** Conformance: the next call of `primitive` fails as EC2 does for `kind`. */
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  /** Another provider on the same moto (other options, same arming). */
  makeProvider(opts?: Partial<AwsProviderOptions>): AwsProvider;
  close(): Promise<void>;
}

const TEST_CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };

/**
 * Start moto and an AwsProvider on it. With `fixtureAmis` (default) moto holds the AMIs of
 * test/fixtures/aws/amis.json instead of its own; moto 5.2 then fails every region but the
 * first one used (it re-parses the already parsed `creation_date` when it loads the second
 * region's backend), so multi-region tests start a double with `fixtureAmis: false`.
 */
export async function startAwsDouble(opts: Partial<AwsProviderOptions> = {}, fixtureAmis = true): Promise<AwsDouble> {
  const moto = await startMoto(fixtureAmis ? { MOTO_AMIS_PATH: AMIS_PATH } : {});
  const armed: Armed[] = [];
  const sent: SentCommand[] = [];
  const rewrites = new Map<string, (xml: string) => string>();
  let server: Parameters<AwsDouble['serve']>[0];

  const configureClient = (client: EC2Client): void => {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = String(context.commandName ?? '').replace(/Command$/, '');
        sent.push({ command, input: { ...(args.input as Record<string, unknown>) } });
        return next(args);
      },
      { step: 'initialize', name: 'gpuprovRecord' },
    );
    // Innermost: below the SDK's deserializer, above the HTTP handler.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = String(context.commandName ?? '').replace(/Command$/, '');
        const i = armed.findIndex((a) => a.command === command);
        const served = i < 0 ? server?.(command, args.input as Record<string, unknown>) : undefined;
        if (served && 'xml' in served) {
          const body = new TextEncoder().encode(served.xml);
          return { response: { statusCode: 200, reason: 'OK', headers: { 'content-type': 'text/xml;charset=UTF-8' }, body }, output: undefined as never };
        }
        if (served) {
          const f = fixtureFor(served.error);
          const body = new TextEncoder().encode(errorXml(f.code, f.message));
          return { response: { statusCode: f.status, reason: '', headers: { 'content-type': 'text/xml;charset=UTF-8' }, body }, output: undefined as never };
        }
        if (i < 0) {
          for (let j = armed.length - 1; j >= 0; j--) if (armed[j]!.sticky && armed[j]!.fired && armed[j]!.xml === undefined) armed.splice(j, 1);
          const edit = rewrites.get(command);
          if (!edit) return next(args);
          const out = await next(args);
          const res = out.response as { body: AsyncIterable<Uint8Array> };
          const chunks: Uint8Array[] = [];
          for await (const c of res.body) chunks.push(c);
          res.body = new TextEncoder().encode(edit(Buffer.concat(chunks).toString('utf8'))) as unknown as AsyncIterable<Uint8Array>;
          return out;
        }
        const a = armed[i]!;
        if (a.sticky) a.fired = true;
        else armed.splice(i, 1);
        if (a.xml !== undefined) {
          const body = new TextEncoder().encode(a.xml);
          return { response: { statusCode: 200, reason: 'OK', headers: { 'content-type': 'text/xml;charset=UTF-8' }, body }, output: undefined as never };
        }
        if (a.lose) {
          await next(args);
          throw Object.assign(new Error('socket hang up'), { name: 'Error', code: 'ECONNRESET' });
        }
        const f = fixtureFor(a.code!);
        const body = new TextEncoder().encode(errorXml(f.code, f.message));
        return { response: { statusCode: f.status, reason: '', headers: { 'content-type': 'text/xml;charset=UTF-8' }, body }, output: undefined as never };
      },
      { step: 'deserialize', priority: 'low', name: 'gpuprovArmedErrors' },
    );
  };

  const makeProvider = (more: Partial<AwsProviderOptions> = {}): AwsProvider =>
    new AwsProvider({
      env: {},
      regions: [REGION],
      endpoint: moto.url,
      credentials: TEST_CREDENTIALS,
      deployment: CONFORMANCE_DEPLOYMENT,
      ...opts,
      ...more,
      // The double's recording and arming stay under a hook of the caller's (contract recorders).
      configureClient: (client) => {
        configureClient(client);
        (more.configureClient ?? opts.configureClient)?.(client);
      },
    });

  const ec2 = new EC2Client({ region: REGION, endpoint: moto.url, credentials: TEST_CREDENTIALS, maxAttempts: 1 });
  const provider = makeProvider();

  const armCode = (command: string, code: string, o: { sticky?: boolean } = {}): void => {
    fixtureFor(code); // fail early on a code without a fixture
    armed.push({ command, code, sticky: o.sticky ?? false, fired: false, lose: false });
  };

  return {
    provider,
    url: moto.url,
    ec2,
    sent,
    async countLive() {
      const out = await ec2.send(
        new DescribeInstancesCommand({
          Filters: [{ Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped', 'shutting-down'] }],
        }),
      );
      return (out.Reservations ?? []).reduce((n, r) => n + (r.Instances?.length ?? 0), 0);
    },
    async countSide() {
      const out = await ec2.send(new DescribeSecurityGroupsCommand({ Filters: [{ Name: 'group-name', Values: ['gpuprov-*'] }] }));
      return out.SecurityGroups?.length ?? 0;
    },
    armCode,
    armLostResponse(command) {
      armed.push({ command, sticky: false, fired: false, lose: true });
    },
    answer(command, xml, o = {}) {
      armed.push({ command, sticky: o.sticky ?? false, fired: false, lose: false, xml });
    },
    serve(s) {
      server = s;
    },
    rewrite(command, edit) {
      if (edit) rewrites.set(command, edit);
      else rewrites.delete(command);
    },
    async arm(kind, primitive) {
      // Capacity and Unsupported are per AZ: fail every subnet of the one create call.
      const perAz = primitive === 'create' && (kind === 'Capacity' || kind === 'Unavailable');
      armCode(PRIMITIVE_COMMANDS[primitive], KIND_CODES[kind], { sticky: perAz });
    },
    makeProvider,
    async close() {
      ec2.destroy();
      await moto.close();
    },
  };
}
