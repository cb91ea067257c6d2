/**
 * Refusals of the Temporal server that gpuprov can explain: the server's own message, and the
 * exact fix. Today: a namespace without gpuprov's search attributes (every start sets them).
 */
import { status } from '@grpc/grpc-js';
import { ServiceError, type Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../core/api';
import { CommandFailure, serverMessage } from './output';

/** gpuprov's search attributes (SEARCH_ATTRIBUTES) that `namespace` does not define. */
export async function missingSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const r = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set([...Object.keys(r.customAttributes ?? {}), ...Object.keys(r.systemAttributes ?? {})]);
  return SEARCH_ATTRIBUTES.filter((name) => !known.has(name));
}

/**
 * The commands that add `missing` to `namespace` at `address`: one per attribute (the temporal CLI
 * adds only the first of several `--name`); the CLI reads the same TEMPORAL_TLS_* / TEMPORAL_API_KEY.
 */
export function searchAttributeCommands(address: string, namespace: string, missing: readonly string[]): string[] {
  return missing.map((name) => `temporal operator search-attribute create --address ${address} --namespace ${namespace} --name ${name} --type Keyword`);
}

/**
 * What to report for `err`, thrown by starting a workflow: when the server refused it and the
 * namespace lacks some of gpuprov's search attributes, a CommandFailure with the server's message
 * and the commands that add them; anything else unchanged.
 */
export async function explainStartFailure(err: unknown, conn: { connection: Connection; namespace: string; address: string }): Promise<unknown> {
  if (!(err instanceof ServiceError) || (err.cause as { code?: unknown } | undefined)?.code !== status.INVALID_ARGUMENT) return err;
  let missing: string[];
  try {
    missing = await missingSearchAttributes(conn.connection, conn.namespace);
  } catch {
    return err; // the original refusal says more than a failed lookup
  }
  if (missing.length === 0) return err;
  const commands = searchAttributeCommands(conn.address, conn.namespace, missing);
  return new CommandFailure(
    `the Temporal server refused to start the workflow: ${serverMessage(err) ?? err.message}. Namespace ${conn.namespace} lacks gpuprov's search attribute${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
    `add ${missing.length > 1 ? 'them' : 'it'} once (Temporal Cloud: tcld namespace search-attributes add), then run start again:\n    ${commands.join('\n    ')}`,
  );
}
