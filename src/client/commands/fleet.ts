/** `provision fleet apply -f shape.yaml | status F | down F`: fleets of nodes reconciled to a declared shape. */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { InputError } from '../../core/errors';
import { parseShape } from '../fleet-schema';
import type { FleetShape } from '../../core/fleet/types';
import type { FleetStatus } from '../../core/fleet-api';
import { GpuprovClient } from '../client';
import { EXIT_BAD_INPUT, EXIT_OK, type Command, type Io } from '../command';
import { connectClient } from '../connect';
import { parseFlags } from '../options';
import { reportError } from '../output';

const USAGE = `Usage: provision fleet <apply|status|down> ...

  apply -f SHAPE.yaml [--json]   start the fleet, or apply a new generation of its shape
  status FLEET [--json]          per-slot stage, attempt, readiness and the converged flag
  down FLEET [--detach] [--json] delete every node, then end the fleet

The shape (YAML or JSON): name, generation, groups: [{ id, role, count, vm: {start options},
bootstrap?: { verify: [cmd], start: cmd, ready: {command}|{http:{port?,path?}}|{tcp:{port?}},
timeout: seconds, portBase?, env?, dir? } }]. A changed shape needs a higher generation.`;

async function loadShape(file: string): Promise<FleetShape> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new InputError('-f', `cannot read ${file}: ${(err as Error).message}`, 'give the path of a shape file, e.g. -f fleet.yaml');
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new InputError('-f', `${file} is not valid YAML: ${(err as Error).message}`, 'check the indentation and quoting');
  }
  try {
    return parseShape(raw);
  } catch (err) {
    throw new InputError('-f', (err as Error).message, 'fix the shape file (see provision fleet --help)');
  }
}

function fleetArg(positionals: string[]): string {
  const name = positionals[0];
  if (!name) throw new InputError('FLEET', 'the fleet name is required', 'e.g. provision fleet status train');
  return name;
}

function printStatus(io: Io, s: FleetStatus): void {
  io.out(`fleet ${s.name}: generation ${s.generation} — ${s.converged ? 'converged' : s.down ? 'tearing down' : 'converging'}\n`);
  for (const n of s.slots) {
    const boot = n.bootstrap ? ` bootstrap=${n.bootstrap.stage ?? n.bootstrap.state} out#${n.bootstrap.lastStdoutSeq ?? 0} err#${n.bootstrap.lastStderrSeq ?? 0}` : '';
    const ep = n.endpoint ? ` ${n.endpoint.user ? `${n.endpoint.user}@` : ''}${n.endpoint.host}:${n.endpoint.port}` : '';
    const extra = `${n.pending ? ` pending=${n.pending}` : ''}${n.current ? '' : ' (outdated)'}${n.failures ? ` failures=${n.failures}` : ''}${n.restartAt ? ` restart=${n.restartAt}` : ''}`;
    io.out(`  ${n.slot.padEnd(24)} a${String(n.attempt).padEnd(4)} ${n.stage.padEnd(13)} ${n.ready ? 'ready' : '-    '}${ep}${boot}${extra}\n`);
  }
}

async function connect(io: Io): Promise<GpuprovClient> {
  const { client } = await connectClient(io, { autoStart: true });
  return new GpuprovClient(client, io.env.GPUPROV_TASK_QUEUE || undefined);
}

async function apply(io: Io, file: string, json: boolean): Promise<number> {
  const shape = await loadShape(file);
  const r = await (await connect(io)).fleet.apply(shape);
  if (json) io.out(JSON.stringify({ ok: true, name: shape.name, ...r }) + '\n');
  else io.out(`fleet ${shape.name}: generation ${r.generation} ${r.changed ? 'applied' : 'already applied'}. next: npx provision fleet status ${shape.name}\n`);
  return EXIT_OK;
}

async function run(args: string[], io: Io): Promise<number> {
  const json = args.includes('--json');
  const [sub, ...rest] = args;
  try {
    if (sub === undefined || sub === '--help' || sub === '-h') {
      io.out(`${USAGE}\n`);
      return sub === undefined ? EXIT_BAD_INPUT : EXIT_OK;
    }
    if (sub === 'apply') {
      const { values } = parseFlags(rest, { file: { type: 'string', short: 'f' }, json: { type: 'boolean' } });
      if (!values.file) throw new InputError('-f', 'the shape file is required', 'e.g. provision fleet apply -f fleet.yaml');
      return await apply(io, String(values.file), json);
    }
    if (sub === 'status' || sub === 'down') {
      const { positionals, values } = parseFlags(rest, { json: { type: 'boolean' }, detach: { type: 'boolean' } }, 1);
      const name = fleetArg(positionals);
      const { fleet } = await connect(io);
      if (sub === 'status') {
        const s = await fleet.status(name);
        if (json) io.out(JSON.stringify(s, null, 2) + '\n');
        else printStatus(io, s);
        return EXIT_OK;
      }
      const handle = await fleet.down(name);
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
    }
    throw new InputError('fleet', `unknown subcommand "${sub}"`, 'use apply, status or down');
  } catch (err) {
    return reportError(io, err, json);
  }
}

export const fleetCommand: Command = {
  name: 'fleet',
  summary: 'run node groups reconciled to a declared shape (apply, status, down)',
  usage: 'provision fleet <apply -f shape.yaml | status FLEET | down FLEET> [--json]',
  run,
};
