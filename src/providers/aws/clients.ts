/**
 * How the AWS adapter's SDK clients (EC2, Price List, Service Quotas) are reached, written once:
 * the endpoint override, explicit credentials, else a named profile.
 */
import type { EC2ClientConfig } from '@aws-sdk/client-ec2';

/** The connection options every AWS client of the adapter takes (`config.ts` resolves them from the environment). */
export interface AwsConnection {
  /** Endpoint override (tests point it at moto or a fixture); default AWS's. */
  endpoint?: string;
  credentials?: EC2ClientConfig['credentials'];
  profile?: string;
}

/** The client-config fields of a connection: explicit credentials win, so the profile goes only without them. */
export function connectionConfig(c: AwsConnection): AwsConnection {
  return {
    ...(c.endpoint ? { endpoint: c.endpoint } : {}),
    ...(c.credentials ? { credentials: c.credentials } : {}),
    ...(c.profile && !c.credentials ? { profile: c.profile } : {}),
  };
}

/** One client per region, made on first use and kept. */
export function perRegion<C>(make: (region: string) => C): (region: string) => C {
  const clients = new Map<string, C>();
  return (region) => {
    let c = clients.get(region);
    if (!c) {
      c = make(region);
      clients.set(region, c);
    }
    return c;
  };
}
