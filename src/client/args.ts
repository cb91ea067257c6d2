/** The positional arguments commands share: a VM, a fleet, a fleet node; each checked before anything is contacted. */
import { InputError } from '../core/errors';
import { NAME_RE } from '../core/fleet/types';
import type { ArgSpec } from './flags';
import { show } from './flags';
import { checkName } from './options';

/** A VM's name (`status gpu1`). */
export function vmNameArg(command: string, meaning = "the VM's name (as given to start)"): ArgSpec {
  return { name: 'NAME', meaning, example: 'gpu1', required: true, check: (raw) => checkName('NAME', raw, `provision ${command} gpu1`) };
}

/** A fleet's name (`fleet status train`): the shape's `name`, at most 19 characters. */
export function checkFleetName(field: string, raw: string, command: string): string {
  if (!NAME_RE.test(raw)) {
    throw new InputError(
      field,
      `${show(raw)} is not a fleet name: it starts with a letter, uses a-z, 0-9 and inner "-", at most 19 characters`,
      `the name: of the shape file, e.g. provision ${command} train`,
    );
  }
  return raw;
}

export function fleetArg(command: string): ArgSpec {
  return {
    name: 'FLEET',
    meaning: "the fleet's name (the shape file's name:)",
    example: 'train',
    required: true,
    check: (raw) => checkFleetName('FLEET', raw, command),
  };
}

/** A fleet node: `<fleet>-<group>-<index>`. */
export const NODE_RE = /^([a-z](?:[a-z0-9-]*[a-z0-9])?)-([a-z][a-z0-9]*)-(\d+)$/;

export const nodeArg: ArgSpec = {
  name: 'NODE',
  meaning: 'a fleet node: <fleet>-<group>-<index>, as `provision fleet status` lists them',
  example: 'train-work-0',
  required: true,
  check: (raw) => {
    if (!NODE_RE.test(raw) || raw.length > 32)
      throw new InputError('NODE', `${show(raw)} is not a fleet node name`, 'give <fleet>-<group>-<index>, e.g. provision logs train-work-0');
    return raw;
  },
};
