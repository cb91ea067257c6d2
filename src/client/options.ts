/**
 * The VM flags of `start` and `offers`: their table (meaning, format, default, example; the
 * source of --help) and their conversion to a VmSpec, which then goes through the one VM spec
 * schema (./vm-spec.ts) that fleet shapes use too. Every rejection names the flag and the fix.
 */
import { InputError } from '../core/errors';
import type { VmSpec } from '../core/api';
import { DEFAULT_TUNING } from '../core/tuning';
import { CLOUD_NAMES, cloudsWhere, listed } from '../core/clouds';
import { spotClouds } from '../core/markets';
import { JSON_FLAG } from './define';
import { list, parseDiskGb, parseDuration, parseGpu, parseParallel, parsePrice, parseSpot } from './flag-values';
import { parseCommandLine, show, type ArgSpec, type FlagSpec, type Values } from './flags';
import { VM_LIMITS, nameSchema, vmSpecSchema } from './vm-spec';
import { reservedAskFromFlags, START_RESERVED_FLAGS } from './reserved-flags';

export { VM_NAME, nameSchema } from './vm-spec';

/** Which clouds sell spot, for --spot's help. */
function spotSellers(): string {
  const sellers = spotClouds();
  return sellers.length
    ? `on ${listed(sellers)} (--spot on other clouds is refused; --spot auto plans them on-demand)`
    : 'no cloud of this build sells spot yet';
}

/** The VM flags shared by `start` and `offers`, by name. */
export const VM_FLAGS = {
  gpu: {
    name: 'gpu',
    type: 'string',
    value: 'MODEL[:N]',
    meaning: 'the GPU model and how many per VM; the model is matched across clouds (H100, A100-80GB, L4, …)',
    format: `MODEL (one GPU), MODEL:N (exactly N) or MODEL:N+ (at least N); N from ${VM_LIMITS.gpuCount.min} to ${VM_LIMITS.gpuCount.max}`,
    default: 'no GPU: the cheapest machine that fits',
    example: '--gpu H100:8',
  },
  cloud: {
    name: 'cloud',
    type: 'string',
    value: 'CLOUD,…',
    meaning: 'only these clouds, tried in this order',
    format: `comma-separated, from: ${CLOUD_NAMES.join(', ')}`,
    default: 'every cloud configured on the worker, cheapest offer first (the local test cloud when none is)',
    example: '--cloud aws,gcp',
  },
  region: {
    name: 'region',
    type: 'string',
    value: 'REGION,…',
    meaning: "only these regions (each cloud's own region ids)",
    format: 'comma-separated region ids',
    default: 'every region',
    example: '--region us-east-1,us-west-2',
  },
  'instance-type': {
    name: 'instance-type',
    type: 'string',
    value: 'TYPE,…',
    meaning: "only these instance types (the clouds' own type names)",
    format: 'comma-separated type names',
    default: 'every type with the asked GPUs',
    example: '--instance-type g5.xlarge',
  },
  'max-price': {
    name: 'max-price',
    type: 'string',
    value: 'USD',
    meaning: 'skip offers above this price per hour (and offers without a known price)',
    format: `US dollars per hour, ${VM_LIMITS.maxPricePerHour.min} to ${VM_LIMITS.maxPricePerHour.max}`,
    default: 'no cap',
    example: '--max-price 2.50',
  },
  image: {
    name: 'image',
    type: 'string',
    value: 'IMAGE',
    meaning:
      "boot the VM from this image (it must run cloud-init and log in as the cloud's usual user, e.g. ubuntu on aws and gcp); clouds that cannot use it, or not in this form, are skipped, and naming only such clouds is refused",
    format:
      'as the cloud names images: an AMI id on aws (ami-…), an image family or image on gcp (projects/P/global/images/family/F), a container image on runpod, vastai and docker (REPO[:TAG]), the image name, slug, family or id on the other VM clouds; not on local',
    default: "each cloud's own image (Ubuntu with the NVIDIA driver on GPU offers)",
    example: '--image ami-0abcdef1234567890',
  },
  'disk-gb': {
    name: 'disk-gb',
    type: 'string',
    value: 'GB',
    meaning: 'size of the boot disk (the container disk on container clouds); clouds whose types fix the disk are skipped',
    format: `a whole number of GB, ${VM_LIMITS.diskGb.min} to ${VM_LIMITS.diskGb.max} (each cloud has its own range); on ${listed(cloudsWhere((c) => c.diskGb !== false))}`,
    default: "each cloud's default (e.g. 20 GB on gcp CPU offers, 200 on its GPU offers, 50 on runpod and vastai)",
    example: '--disk-gb 200',
  },
  spot: {
    name: 'spot',
    type: 'string',
    value: 'MODE',
    bare: { value: 'only', choices: ['only', 'auto'] },
    meaning:
      'rent spot (preemptible) capacity: --spot takes spot offers only, --spot auto tries every spot offer first and then on-demand; the price is the spot price, and on start --recover is on (--no-recover turns it off)',
    format: `alone (only) or auto; ${spotSellers()}`,
    default: 'on-demand only',
    example: '--spot auto',
  },
} as const satisfies Record<string, FlagSpec>;

/** `start`'s flags (the VM's name is also its optional NAME argument). */
export const START_FLAGS = [
  {
    name: 'name',
    type: 'string',
    value: 'NAME',
    meaning: "the VM's name, unique in this deployment (also the ssh host name: `ssh NAME`)",
    format: 'a lowercase letter, then lowercase letters, digits and inner "-"; at most 32 characters',
    default: 'none: required (as --name or as the NAME argument)',
    example: '--name gpu1',
  },
  VM_FLAGS.gpu,
  VM_FLAGS.cloud,
  VM_FLAGS.region,
  VM_FLAGS['instance-type'],
  VM_FLAGS['max-price'],
  VM_FLAGS.image,
  VM_FLAGS['disk-gb'],
  VM_FLAGS.spot,
  ...START_RESERVED_FLAGS,
  {
    name: 'ttl',
    type: 'string',
    value: 'DURATION',
    meaning: 'tear the VM down automatically this long after it is ready',
    format: 'a number and a unit, combined: s, m, h, d (e.g. 90m, 8h, 1h30m, 2d); 1 minute to 30 days',
    default: 'no TTL: it runs until `provision down`',
    example: '--ttl 1h30m',
  },
  {
    name: 'budget',
    type: 'string',
    value: 'USD',
    meaning: 'tear the VM down when its spend so far (price × billed time of every attempt) reaches this; a warning at 80 %',
    format: `US dollars, ${VM_LIMITS.budgetUsd.min} to ${VM_LIMITS.budgetUsd.max}`,
    default: 'no budget',
    example: '--budget 25',
  },
  {
    name: 'parallel',
    type: 'string',
    value: 'N',
    meaning: 'try up to N offers at once, in plan order; the first ready wins and the others are deleted (never more than N instances)',
    format: `a whole number, ${VM_LIMITS.parallel.min} to ${VM_LIMITS.parallel.max}`,
    default: '1: one offer after another',
    example: '--parallel 3',
  },
  {
    name: 'recover',
    type: 'boolean',
    negatable: true,
    meaning: `when the VM is lost (its instance vanished, failed or was preempted), delete what is left and launch it again under the same name, with a fresh plan; at most ${DEFAULT_TUNING.maxRecoveries} times, and --budget counts every run. A spot VM given notice is replaced before the deadline (the old instance deleted when the new one is Ready); with --spot auto, ${DEFAULT_TUNING.spotAutoPreemptions} preemptions within a day make the replacement on-demand`,
    default: 'off: a lost VM is torn down and stays lost; on with --spot (either mode), unless --no-recover',
    example: '--recover',
  },
  {
    name: 'retry-until-up',
    type: 'boolean',
    meaning: 'when every offer failed (no capacity), wait and try them all again, until one comes up or you cancel',
    default: 'off: fail after one pass over the offers',
    example: '--retry-until-up',
  },
  {
    name: 'k8s',
    type: 'boolean',
    negatable: true,
    meaning: 'install single-node Kubernetes (k3s); --k8s requires it (only clouds that can run it), --no-k8s never installs it',
    default: 'auto: k3s where the cloud supports it, none elsewhere',
    example: '--no-k8s',
  },
  {
    name: 'detach',
    type: 'boolean',
    meaning: 'return as soon as the launch is accepted instead of following it until ready',
    default: 'off: follow the launch and print the result',
    example: '--detach',
  },
  {
    name: 'ssh-key',
    type: 'string',
    value: 'PATH',
    meaning: 'your SSH private key for `ssh NAME`; its PATH.pub is installed on the VM',
    format: 'a private key file with PATH.pub beside it',
    default: '~/.ssh/id_ed25519, id_ecdsa or id_rsa, else a key gpuprov makes once',
    example: '--ssh-key ~/.ssh/id_ed25519',
  },
] as const satisfies readonly FlagSpec[];

/** The VM spec fields behind each flag: a problem at `ttlMs` is reported as `--ttl`. */
const FLAG_OF: Record<string, string> = {
  name: '--name',
  gpu: '--gpu',
  clouds: '--cloud',
  regions: '--region',
  instanceTypes: '--instance-type',
  maxPricePerHour: '--max-price',
  ttlMs: '--ttl',
  budgetUsd: '--budget',
  retryUntilUp: '--retry-until-up',
  recover: '--recover',
  parallel: '--parallel',
  k8s: '--k8s',
  publicKeys: '--ssh-key',
  image: '--image',
  diskGb: '--disk-gb',
  spot: '--spot',
  reserved: '--reservation',
};
const FIX_OF: Record<string, string> = {
  '--ssh-key': 'give the private key whose .pub is an OpenSSH public key (ssh-keygen -y -f KEY > KEY.pub)',
  '--k8s': 'drop --k8s, or add a VM cloud, e.g. --cloud aws',
};
const EXAMPLE_OF = Object.fromEntries([...START_FLAGS].map((f) => [`--${f.name}`, f.example]));

/** The fix a cross-field rule of the schema attached to its issue (`params.fix`). */
function fixOf(issue: object): string | undefined {
  const fix = (issue as { params?: { fix?: unknown } }).params?.fix;
  return typeof fix === 'string' ? fix : undefined;
}

/** Validate a VmSpec built from flags with THE schema; the first problem becomes an InputError naming its flag. */
export function checkSpecFromFlags(raw: VmSpec): VmSpec {
  const r = vmSpecSchema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const flag = FLAG_OF[String(issue.path[0])] ?? 'arguments';
  const fix = fixOf(issue) ?? FIX_OF[flag] ?? `e.g. ${EXAMPLE_OF[flag] ?? flag}`;
  throw new InputError(flag, issue.message, fix);
}

/** A VM name given as an argument or flag: the name, or an InputError showing it escaped. */
export function checkName(field: string, raw: string, example: string): string {
  const r = nameSchema.safeParse(raw);
  if (!r.success) throw new InputError(field, `name ${show(raw)} ${r.error.issues[0]?.message ?? 'is invalid'}`, `e.g. ${example}`);
  return r.data;
}

/** The flags `start` and `offers` share, as VmSpec fields (formats checked; bounds are the schema's). */
export function vmFieldsOf(v: Values<readonly (typeof VM_FLAGS)[keyof typeof VM_FLAGS][]>): Omit<VmSpec, 'name'> {
  const spec: Omit<VmSpec, 'name'> = {};
  if (v.gpu !== undefined) spec.gpu = parseGpu(v.gpu);
  const clouds = list('--cloud', v.cloud);
  if (clouds) spec.clouds = clouds;
  const regions = list('--region', v.region);
  if (regions) spec.regions = regions;
  const types = list('--instance-type', v['instance-type']);
  if (types) spec.instanceTypes = types;
  if (v['max-price'] !== undefined) spec.maxPricePerHour = parsePrice(v['max-price']);
  if (v.image !== undefined) spec.image = v.image;
  if (v['disk-gb'] !== undefined) spec.diskGb = parseDiskGb(v['disk-gb']);
  if (v.spot !== undefined) spec.spot = parseSpot(v.spot);
  return spec;
}

export interface StartOptions {
  spec: VmSpec;
  detach: boolean;
  json: boolean;
  sshKeyPath?: string;
}

/** `start`'s parsed flags → a validated VmSpec (without public keys, which the command adds). */
export function startOptions(v: Values<typeof START_FLAGS> & { json?: boolean }): StartOptions {
  if (v.name === undefined) throw new InputError('--name', 'the VM needs a name', 'add --name gpu1 (or give it as the argument: provision start gpu1)');
  const spec: VmSpec = { name: checkName('--name', v.name, '--name gpu1'), ...vmFieldsOf(v) };
  if (v.ttl !== undefined) spec.ttlMs = parseDuration('--ttl', v.ttl);
  if (v.budget !== undefined) spec.budgetUsd = parsePrice(v.budget, '--budget', 'give US dollars, e.g. --budget 25');
  if (v['retry-until-up']) spec.retryUntilUp = true;
  // A spot VM is reclaimed by its cloud now and then: relaunching it is the default there.
  if (v.recover ?? spec.spot !== undefined) spec.recover = true;
  if (v.parallel !== undefined) spec.parallel = parseParallel(v.parallel);
  const reserved = reservedAskFromFlags(v, {
    spot: spec.spot !== undefined,
    ...(spec.parallel !== undefined ? { parallel: spec.parallel } : {}),
    ...(spec.gpu ? { gpu: spec.gpu } : {}),
    ...(spec.regions ? { regions: spec.regions } : {}),
    ...(spec.instanceTypes ? { instanceTypes: spec.instanceTypes } : {}),
  });
  if (reserved) spec.reserved = reserved;
  spec.k8s = v.k8s === true ? 'on' : v.k8s === false ? 'off' : 'auto';
  return { spec: checkSpecFromFlags(spec), detach: v.detach === true, json: v.json === true, ...(v['ssh-key'] ? { sshKeyPath: v['ssh-key'] } : {}) };
}

/** `start`'s NAME argument: the same as --name. */
export const START_ARGS: readonly ArgSpec[] = [
  {
    name: 'NAME',
    meaning: "the VM's name, the same as --name (give one of them)",
    example: 'gpu1 --gpu H100:1',
    required: false,
    flag: 'name',
    check: (raw) => checkName('NAME', raw, 'provision start gpu1'),
  },
];

/** `start`'s command line → its options (for tests and callers that build a start themselves). */
export function parseStart(args: string[]): StartOptions {
  return startOptions(parseCommandLine({ path: 'start', flags: [...START_FLAGS, JSON_FLAG], args: START_ARGS }, args).values);
}
