/**
 * DigitalOcean's per-VM cloud firewall: made once in prepare, covering droplets by the VM's
 * deployment tag (`gpuprov-<vm>-<deployment hash>`, also its name), opening 22 (and 6443 only when the spec asks), removed by cleanup.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFORMANCE_DEPLOYMENT, specFor } from './conformance';
import { ownedName } from '../../src/providers/deployment';
import { startDigitalOceanDouble, type DigitalOceanDouble } from './digitalocean/double';
import { planned } from './planned';

const fw = (vm: string): string => ownedName(vm, CONFORMANCE_DEPLOYMENT);

describe('digitalocean per-VM firewall', () => {
  let d: DigitalOceanDouble;
  beforeAll(async () => {
    d = await startDigitalOceanDouble({ perPage: 2 });
  });
  afterAll(async () => d.close());

  const inboundPorts = (name: string): string[] =>
    [...d.server.firewalls.values()].filter((f) => f.name === name).flatMap((f) => (f.inbound_rules as { ports: string }[]).map((r) => r.ports));

  it('prepare makes one firewall per VM (idempotent), tagged with the identity; the droplet is covered from birth; cleanup deletes it', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', gpu: { model: 'H100', count: 1 }, k8s: true });
    const spec = specFor('do-fw', { openPorts: [22, 6443] });
    const prepared = await d.provider.prepare(offer!, spec);
    expect(await d.provider.prepare(offer!, spec)).toEqual(prepared); // a retried prepare finds it
    const mine = [...d.server.firewalls.values()].filter((f) => f.name === fw('do-fw'));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.tags).toEqual([fw('do-fw')]);
    expect(d.server.tags.has(fw('do-fw'))).toBe(true);
    expect(inboundPorts(fw('do-fw'))).toEqual(['22', '6443']);
    expect(mine[0]!.inbound_rules).toContainEqual({ protocol: 'tcp', ports: '22', sources: { addresses: ['0.0.0.0/0', '::/0'] } });
    expect((mine[0]!.outbound_rules as { protocol: string }[]).map((r) => r.protocol)).toEqual(['tcp', 'udp', 'icmp']);

    const id = await d.provider.create(offer!, prepared, spec);
    expect(d.server.firewallsOf(Number(id)).map((f) => f.name)).toEqual([fw('do-fw')]);

    const at = { cloud: 'digitalocean', region: offer!.region };
    await d.provider.delete(at, spec.vmName, [id]);
    await d.provider.observe(at, spec.vmName);
    await d.provider.cleanup(at, spec.vmName);
    expect([...d.server.firewalls.values()].filter((f) => f.name === fw('do-fw'))).toEqual([]);
    await d.provider.cleanup(at, spec.vmName); // already gone: still fine
  });

  it("without 6443 in openPorts only SSH is open; another VM's firewall is left alone by cleanup", async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', k8s: false });
    await d.provider.prepare(offer!, specFor('do-ssh-only', { openPorts: [22] }));
    await d.provider.prepare(offer!, specFor('do-other', { openPorts: [22, 6443] }));
    expect(inboundPorts(fw('do-ssh-only'))).toEqual(['22']);
    await d.provider.cleanup({ cloud: 'digitalocean', region: offer!.region }, 'do-ssh-only');
    expect(inboundPorts(fw('do-ssh-only'))).toEqual([]);
    expect(inboundPorts(fw('do-other'))).toEqual(['22', '6443']);
  });
});
