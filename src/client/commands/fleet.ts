/** `provision fleet apply -f shape.yaml | status F | down F`: fleets of nodes reconciled to a declared shape. */
import { readFile } from 'node:fs/promises';
import { WorkflowNotFoundError } from '@temporalio/client';
import { parse as parseYaml } from 'yaml';
import { InputError } from '../../core/errors';
import { parseShape } from '../fleet-schema';
import type { FleetShape } from '../../core/fleet/types';
import type { FleetStatus } from '../../core/fleet-api';
import { GpuprovClient } from '../client';
import { fleetArg } from '../args';
import { EXIT_OK, type Command, type Io } from '../command';
import { connectClient } from '../connect';
import { group, leaf } from '../define';
import { CommandFailure } from '../output';

const SHAPE_NOTES = `The shape (YAML or JSON): name, generation, groups: [{ id, role, count, vm: {VM options}, bootstrap?:
{ verify: [cmd], start: cmd, ready: {command}|{http:{port?,path?}}|{tcp:{port?}}, timeout: seconds,
portBase?, env?, dir? } }]. A changed shape needs a higher generation.
vm: takes start's options as fields, with start's bounds: gpu: {model: H100, count: 8}, clouds: [aws],
regions: [us-east-1], instanceTypes: [g5.xlarge], maxPricePerHour: 2.5 (0.01 to 1000), ttlMs: 3600000
(1 minute to 30 days), retryUntilUp: true, k8s: auto|on|off, publicKeys: ["ssh-ed25519 AAAA…"],
image: ami-0abcdef1234567890 (as start --image), diskGb: 200 (as start --disk-gb),
budgetUsd: 25 (per VM: each VM of the group is torn down when its own spend reaches it, and its slot is not
replaced until the group changes, e.g. a new budget).`;

async function loadShape(file: string): Promise<FleetShape> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new InputError('-f', `cannot read ${file}: ${(err as Error).message}`, 'give the path of a shape file, e.g. -f fleet.yaml');
  }
  const text = bytes.toString('utf8');
  if (bytes.includes(0) || text.includes('\uFFFD'))
    throw new InputError('-f', `${file} is not a text file (YAML or JSON)`, 'give the path of a shape file, e.g. -f fleet.yaml');
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new InputError(
      '-f',
      `${file} is not valid YAML: ${((err as Error).message.split('\n')[0] ?? '').slice(0, 300)}`,
      'check the indentation and quoting',
    );
  }
  try {
    return parseShape(raw);
  } catch (err) {
    throw new InputError('-f', `${file}: ${(err as Error).message}`, 'fix the shape file (see provision fleet apply --help)');
  }
}

function printStatus(io: Io, s: FleetStatus): void {
  io.out(`fleet ${s.name}: generation ${s.generation} — ${s.converged ? 'converged' : s.down ? 'tearing down' : 'converging'}\n`);
  for (const n of s.slots) {
    const boot = n.bootstrap
      ? ` bootstrap=${n.bootstrap.stage ?? n.bootstrap.state} out#${n.bootstrap.lastStdoutSeq ?? 0} err#${n.bootstrap.lastStderrSeq ?? 0}`
      : '';
    const ep = n.endpoint ? ` ${n.endpoint.user ? `${n.endpoint.user}@` : ''}${n.endpoint.host}:${n.endpoint.port}` : '';
    const extra = `${n.pending ? ` pending=${n.pending}` : ''}${n.current ? '' : ' (outdated)'}${n.failures ? ` failures=${n.failures}` : ''}${n.restartAt ? ` restart=${n.restartAt}` : ''}`;
    io.out(`  ${n.slot.padEnd(24)} a${String(n.attempt).padEnd(4)} ${n.stage.padEnd(13)} ${n.ready ? 'ready' : '-    '}${ep}${boot}${extra}\n`);
  }
}

async function connect(io: Io): Promise<GpuprovClient> {
  const { client } = await connectClient(io, { autoStart: true });
  return new GpuprovClient(client, io.env.GPUPROV_TASK_QUEUE || undefined);
}

/** A fleet that was never applied is "no such fleet", not the VM wording of the error printer. */
function noSuchFleet(name: string): (err: unknown) => never {
  return (err) => {
    if (err instanceof WorkflowNotFoundError)
      throw new CommandFailure(`no such fleet: nothing named ${name} was applied on this deployment`, 'npx provision fleet apply -f fleet.yaml');
    throw err;
  };
}

const applyCommand = leaf({
  name: 'apply',
  path: 'fleet apply',
  summary: 'start the fleet, or apply a new generation of its shape',
  flags: [
    {
      name: 'file',
      short: 'f',
      type: 'string',
      value: 'SHAPE',
      meaning: 'the shape file (read and fully checked before anything is contacted)',
      format: 'a YAML or JSON file (see below)',
      default: 'none: required',
      example: '-f fleet.yaml',
    },
  ],
  notes: SHAPE_NOTES,
  temporal: true,
  async run({ values, json }, io) {
    if (values.file === undefined) throw new InputError('-f', 'the shape file is required', 'e.g. provision fleet apply -f fleet.yaml');
    const shape = await loadShape(values.file);
    const { fleet } = await connect(io);
    const r = await fleet.apply(shape).catch(async (err: unknown) => {
      // An Update on a fleet that failed at once (its shape refused by the workflow) fails with no
      // reason of its own: the fleet's failure is the reason.
      const h = fleet.handle(shape.name);
      const running = await h.describe().then(
        (d) => d.status.name === 'RUNNING',
        () => true,
      );
      throw (
        (running
          ? undefined
          : await h.result().then(
              () => undefined,
              (e: unknown) => e,
            )) ?? err
      );
    });
    if (json) io.out(JSON.stringify({ ok: true, name: shape.name, ...r }) + '\n');
    else {
      const what = r.started
        ? `started with generation ${r.generation}`
        : `generation ${r.generation} ${r.changed ? 'applied' : 'already applied (no change)'}`;
      io.out(`fleet ${shape.name}: ${what}. next: npx provision fleet status ${shape.name}\n`);
    }
    return EXIT_OK;
  },
});

const statusCommand = leaf({
  name: 'status',
  path: 'fleet status',
  summary: 'per-slot stage, attempt, readiness and the converged flag',
  args: [fleetArg('fleet status')],
  flags: [],
  temporal: true,
  async run({ args, json }, io) {
    const s = await (await connect(io)).fleet.status(args[0]!).catch(noSuchFleet(args[0]!));
    if (json) io.out(JSON.stringify(s, null, 2) + '\n');
    else printStatus(io, s);
    return EXIT_OK;
  },
});

const downCommand = leaf({
  name: 'down',
  path: 'fleet down',
  summary: 'delete every node, then end the fleet',
  args: [fleetArg('fleet down')],
  flags: [
    {
      name: 'detach',
      type: 'boolean',
      meaning: 'return once the teardown is requested instead of waiting until every node is deleted',
      default: 'off: wait until the fleet is gone',
      example: '--detach',
    },
  ],
  temporal: true,
  async run({ args, values, json }, io) {
    const name = args[0]!;
    const handle = await (await connect(io)).fleet.down(name).catch(noSuchFleet(name));
    if (values.detach) {
      if (json) io.out(JSON.stringify({ ok: true, name, signalled: 'teardown' }) + '\n');
      else io.out(`fleet ${name}: teardown requested.\n`);
      return EXIT_OK;
    }
    if (!json) io.err(`Tearing down fleet ${name}…\n`);
    const end = await handle.result();
    if (json) io.out(JSON.stringify({ ok: true, status: end }) + '\n');
    else io.out(`fleet ${name} is gone; every node was deleted.\n`);
    return EXIT_OK;
  },
});

export const fleetCommand: Command = group({
  name: 'fleet',
  summary: 'run node groups reconciled to a declared shape (apply, status, down)',
  subcommands: [applyCommand, statusCommand, downCommand],
  notes: SHAPE_NOTES,
});
