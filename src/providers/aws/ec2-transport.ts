/**
 * How an EC2 call is sent: @aws-sdk/client-ec2 loaded on first use, one client per region with
 * the SDK's own retries off, every page of a paginated Describe, the response checked against
 * its schema, and errors classified with the credentials redacted.
 */
import type * as Ec2Sdk from '@aws-sdk/client-ec2';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { redactError } from '../redact';
import { connectionConfig, perRegion, type AwsConnection } from './clients';
import { classify } from './errors';

/** How to reach EC2: the connection (endpoint override for moto, credentials or profile), client hook. */
export interface Ec2ApiOptions extends AwsConnection {
  /** Called on every client made (tests add middleware here). */
  configureClient?: (client: EC2Client) => void;
  /** MaxResults for paginated Describe calls (5..1000). */
  pageSize?: number;
}

function parse<T>(schema: z.ZodType<T>, out: unknown, what: string): T {
  const r = schema.safeParse(out);
  if (!r.success) throw new ProviderError('Failed', `AWS ${what}: unexpected response shape: ${r.error.issues[0]?.message ?? 'invalid'}`);
  return r.data;
}

let sdk: typeof Ec2Sdk | undefined;

/**
 * @aws-sdk/client-ec2, loaded with the first client rather than at import: every worker imports
 * this adapter (through the default registry), and only one with AWS credentials should carry
 * the SDK (~80 MB of RSS).
 */
function ec2Sdk(): typeof Ec2Sdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose (see above)
  sdk ??= require('@aws-sdk/client-ec2') as typeof Ec2Sdk;
  return sdk;
}

/** Sends EC2 calls for ./api.ts; no retries (Temporal's activity retry policy is the only one). */
export class Ec2Transport {
  private readonly client: (region: string) => EC2Client;

  constructor(private readonly opts: Ec2ApiOptions) {
    this.client = perRegion((region) => {
      const c = new (ec2Sdk().EC2Client)({
        region,
        // Temporal's activity retry policy is the only retry; the SDK must not add its own.
        maxAttempts: 1,
        ...connectionConfig(opts),
      });
      opts.configureClient?.(c);
      return c;
    });
  }

  async call<T>(region: string, what: string, schema: z.ZodType<T>, send: (c: EC2Client, sdk: typeof Ec2Sdk) => Promise<unknown>): Promise<T> {
    let out: unknown;
    try {
      out = await send(this.client(region), ec2Sdk());
    } catch (err) {
      throw redactError(classify(err, `${what} (${region})`), await this.secrets(region));
    }
    return parse(schema, out, what);
  }

  /** Every page of a paginated Describe call: `send` asks for the page after `NextToken`, `items` reads one page. */
  async pages<P extends { NextToken?: string | null | undefined }, R>(
    region: string,
    what: string,
    schema: z.ZodType<P>,
    send: (c: EC2Client, sdk: typeof Ec2Sdk, NextToken: string | undefined) => Promise<unknown>,
    items: (page: P) => Iterable<R>,
  ): Promise<R[]> {
    const found: R[] = [];
    let NextToken: string | undefined;
    do {
      const page = await this.call(region, what, schema, (c, sdk) => send(c, sdk, NextToken));
      found.push(...items(page));
      NextToken = page.NextToken ?? undefined;
    } while (NextToken);
    return found;
  }

  /** The credential values this client signs with (explicit, or as resolved from a profile), to redact from errors. */
  private async secrets(region: string): Promise<string[]> {
    try {
      const c = await this.client(region).config.credentials();
      return [c.accessKeyId, c.secretAccessKey, c.sessionToken].filter((v): v is string => typeof v === 'string');
    } catch {
      return [];
    }
  }

  get pageSize(): number {
    return this.opts.pageSize ?? 100;
  }
}
