/**
 * Our Nebius `.proto` subset (src/providers/nebius/proto) against the descriptors the `nebius`
 * SDK ships: for every message, enum and service we declare, the package, each field's number,
 * type, repetition, map key/value and oneof, each enum value's number, each RPC's path and
 * message types, and the address the SDK resolves for each service (ours: endpoints.ts; the
 * OperationService is in fact polled at the address of the service that returned the operation,
 * by the SDK and by us alike). Fields and values the SDK
 * has and we leave out are fine (ours is a subset); anything we declare differently is not.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as protobuf from 'protobufjs';
import { serviceAddress } from '../../src/providers/nebius/endpoints';
import { runDriver } from './vendor';

export const PROTO_ROOT = resolve(__dirname, '../../src/providers/nebius/proto');

interface SdkField {
  number: number;
  type: string;
  repeated: boolean;
  oneof: string | null;
  map?: { key: string; value: string };
}
type SdkDescriptor =
  | { kind: 'message'; package: string; fields: Record<string, SdkField> }
  | { kind: 'enum'; package: string; values: Record<string, number> }
  | { kind: 'service'; package: string; address: string; methods: Record<string, { input: string; output: string; path: string }> }
  | null;

/** Every .proto under `dir`, relative to `base` (the root being compared, which may be a copy). */
function protoFiles(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? protoFiles(p, base) : n.endsWith('.proto') ? [relative(base, p)] : [];
  });
}

/** Our declarations, by full name (no leading dot), from every .proto under PROTO_ROOT. */
export function ourDeclarations(root = PROTO_ROOT): Map<string, protobuf.ReflectionObject> {
  const pb = new protobuf.Root();
  pb.resolvePath = (_origin, target) => (target.startsWith('/') || target.startsWith('google/protobuf/') ? target : join(root, target));
  pb.loadSync(
    protoFiles(root).map((f) => join(root, f)),
    { keepCase: true },
  );
  pb.resolveAll();
  const out = new Map<string, protobuf.ReflectionObject>();
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const o of ns.nestedArray) {
      if ((o.filename ?? '').startsWith(root) && (o instanceof protobuf.Type || o instanceof protobuf.Enum || o instanceof protobuf.Service))
        out.set(o.fullName.slice(1), o);
      if (o instanceof protobuf.Namespace || o instanceof protobuf.Type) walk(o);
    }
  };
  walk(pb);
  return out;
}

const typeOf = (f: protobuf.Field): string => (f.resolvedType ? f.resolvedType.fullName.slice(1) : f.type);
const pkgOf = (o: protobuf.ReflectionObject): string => {
  let p = o.parent;
  while (p && !(p instanceof protobuf.Namespace && !(p instanceof protobuf.Type) && !(p instanceof protobuf.Service))) p = p.parent;
  return p ? p.fullName.slice(1) : '';
};

/** Every difference between our declaration of `name` and the SDK's, as readable lines. */
export function compareDeclaration(name: string, ours: protobuf.ReflectionObject, sdk: SdkDescriptor): string[] {
  if (!sdk) return [`${name}: not in the SDK`];
  const out: string[] = [];
  const pkg = pkgOf(ours);
  if (pkg !== sdk.package) out.push(`${name}: package ours ${pkg}, SDK ${sdk.package}`);
  if (ours instanceof protobuf.Type) {
    if (sdk.kind !== 'message') return [...out, `${name}: ours a message, SDK a ${sdk.kind}`];
    for (const f of ours.fieldsArray) {
      const s = sdk.fields[f.name];
      if (!s) {
        out.push(`${name}.${f.name}: not in the SDK`);
        continue;
      }
      const mine = f instanceof protobuf.MapField ? { type: 'map', map: { key: f.keyType, value: typeOf(f) } } : { type: typeOf(f) };
      if (f.id !== s.number) out.push(`${name}.${f.name}: number ours ${f.id}, SDK ${s.number}`);
      if (mine.type !== s.type) out.push(`${name}.${f.name}: type ours ${mine.type}, SDK ${s.type}`);
      if ('map' in mine && JSON.stringify(mine.map) !== JSON.stringify(s.map))
        out.push(`${name}.${f.name}: map ours ${JSON.stringify(mine.map)}, SDK ${JSON.stringify(s.map)}`);
      if (f.repeated !== s.repeated) out.push(`${name}.${f.name}: repeated ours ${f.repeated}, SDK ${s.repeated}`);
      if ((f.partOf?.name ?? null) !== s.oneof) out.push(`${name}.${f.name}: oneof ours ${f.partOf?.name ?? 'none'}, SDK ${s.oneof ?? 'none'}`);
    }
  } else if (ours instanceof protobuf.Enum) {
    if (sdk.kind !== 'enum') return [...out, `${name}: ours an enum, SDK a ${sdk.kind}`];
    for (const [v, n] of Object.entries(ours.values)) {
      if (sdk.values[v] === undefined) out.push(`${name}.${v}: not in the SDK`);
      else if (sdk.values[v] !== n) out.push(`${name}.${v}: number ours ${n}, SDK ${sdk.values[v]}`);
    }
  } else if (ours instanceof protobuf.Service) {
    if (sdk.kind !== 'service') return [...out, `${name}: ours a service, SDK a ${sdk.kind}`];
    for (const m of ours.methodsArray) {
      const s = sdk.methods[m.name];
      const path = `/${name}/${m.name}`;
      if (!s) out.push(`${path}: not in the SDK`);
      else {
        if (s.path !== path) out.push(`${path}: RPC path ours ${path}, SDK ${s.path}`);
        if (m.resolvedRequestType?.fullName.slice(1) !== s.input)
          out.push(`${path}: request ours ${m.resolvedRequestType?.fullName.slice(1) ?? m.requestType}, SDK ${s.input}`);
        if (m.resolvedResponseType?.fullName.slice(1) !== s.output)
          out.push(`${path}: response ours ${m.resolvedResponseType?.fullName.slice(1) ?? m.responseType}, SDK ${s.output}`);
      }
    }
  }
  return out;
}

export interface ProtoReport {
  sdk: string;
  checked: number;
  differences: string[];
  addresses: { service: string; ours: string | undefined; sdk: string }[];
}

/** Compare every declaration of ours with the SDK's; `root` may point at a changed copy (tests). */
export async function compareNebiusProtos(root = PROTO_ROOT): Promise<ProtoReport> {
  const ours = ourDeclarations(root);
  const names = [...ours.keys()];
  const sdk = (await runDriver('nebius_descriptors.py', names)) as unknown as { version: string; descriptors: Record<string, SdkDescriptor> };
  const differences = names.flatMap((n) => compareDeclaration(n, ours.get(n)!, sdk.descriptors[n] ?? null));
  const addresses = names
    .map((n) => [n, sdk.descriptors[n]] as const)
    .filter((e): e is readonly [string, Extract<SdkDescriptor, { kind: 'service' }>] => e[1]?.kind === 'service')
    .map(([n, d]) => ({ service: n, ours: serviceAddress(n), sdk: d.address }));
  return { sdk: sdk.version, checked: names.length, differences, addresses };
}
