/**
 * Every difference the contract suite finds between a request our adapter sends and the one the
 * vendor's published client sends for the same call. The suite fails on a difference listed in
 * neither table, and on a row that no longer occurs (fixed: remove it).
 *
 * `ours` / `vendor` are descriptors: JSON types (`string`, `number|null`, `absent`), the path
 * template as sent, `authorization Bearer`, or a JSON value for the enum-like fields each
 * cloud compares by value (see `shape.values` in clouds.ts).
 */
import type { Difference } from './shapes';

export interface KnownDifference extends Difference {
  why: string;
}

const k = (cloud: string, call: string, aspect: string, ours: string, vendor: string, why: string): KnownDifference => ({
  cloud,
  call,
  aspect,
  ours,
  vendor,
  why,
});

/** Adapter bugs: the real API may refuse or misread what we send. For the adapters to fix. */
export const KNOWN_ADAPTER_MISMATCHES: KnownDifference[] = [];

/**
 * Harmless differences: the vendor's client sends an optional field we leave at the API's
 * default (or we set one it leaves unset), a query parameter we do not need, or its serializer
 * drops what ours keeps (empty maps).
 */
export const ACCEPTED_DIFFERENCES: KnownDifference[] = [
  k('vastai', 'search', 'body.external', 'absent', 'object', 'a default filter of the client; our search sets its own filters'),
  k('vastai', 'create', 'body.python_utf8', 'absent', 'boolean', 'client default false'),
  k('vastai', 'create', 'body.lang_utf8', 'absent', 'boolean', 'client default false'),
  k('vastai', 'create', 'body.use_jupyter_lab', 'absent', 'boolean', 'client default false'),
  k('vastai', 'create', 'body.force', 'absent', 'boolean', 'client default false'),
  k('vastai', 'list', 'query.order_by', 'absent', 'json', 'we filter by label and do not need an order'),
  k('vastai', 'delete', 'body', 'absent', 'object', 'the client sends an empty JSON body {} with DELETE'),
  k('verda', 'create', 'body.volumes', 'absent', 'array', 'client default []: no extra volumes'),
  k('verda', 'create', 'body.existing_volumes', 'absent', 'array', 'client default []'),
  k('hyperstack', 'create', 'body.enhanced_monitoring_enabled', 'absent', 'boolean', 'client default false'),
  k('primeintellect', 'create', 'body.pod.country', 'string', 'null', "we pin the offer's country; the CLI leaves it to the API"),
  k('primeintellect', 'create', 'body.pod.security', 'string', 'null', "we pin the offer's security tier; the CLI leaves it to the API"),
  k('primeintellect', 'create', 'body.pod.maxPrice', 'number', 'null', "we cap the price at the offer's; the CLI sends no cap"),
  k('primeintellect', 'create', 'body.pod.autoRestart', 'absent', 'boolean', 'CLI default false'),
  k(
    'primeintellect',
    'create',
    'body.pod.sshKeyId',
    'string',
    'absent',
    "`pod.sshKeyId` is in Prime Intellect's API reference (POST /api/v1/pods); `PodsClient.create` sends the dict as given, only `prime pods create` leaves it out (pods then get the account's primary key). We register the worker key (POST /ssh_keys, named by its hash) and name it, so the pod trusts the key we log in with without changing the user's primary key",
  ),
  k('digitalocean', 'sizes', 'query.page', 'absent', 'number', 'pydo always sends page=1; the API defaults to it'),
  k('digitalocean', 'ssh-keys', 'query.page', 'absent', 'number', 'pydo always sends page=1'),
  k('digitalocean', 'list', 'query.page', 'absent', 'number', 'pydo always sends page=1'),
  k('digitalocean', 'firewalls', 'query.page', 'absent', 'number', 'pydo always sends page=1'),
  // Our adapter uses Google's Node client; both clients serialize the same message, but only the Node one keeps empty maps.
  k('gcp', 'create', 'body.disks[].initializeParams.labels', 'object', 'absent', 'an empty map {}: the Python client drops it'),
  k('gcp', 'create', 'body.disks[].initializeParams.resourceManagerTags', 'object', 'absent', 'an empty map {}: the Python client drops it'),
  k('gcp', 'operation-wait', 'body', 'string', 'absent', 'a body-less POST: the Node client (REST fallback) sends an empty body, the Python client none'),
  k('gcp flex-start', 'create', 'body.params.resourceManagerTags', 'object', 'absent', 'an empty map {}: the Python client drops it'),
  k(
    'gcp-billing',
    'list-skus',
    'query.$alt',
    'absent',
    'string',
    '`json;enum-encoding=int`: the Python REST transport asks for enums as numbers; without it the API answers JSON with enum names, which is what we parse',
  ),
  // lambda-cloud-api-client 0.1.145 was generated from an older OpenAPI document than Lambda's current one, which has both.
  k('lambda', 'launch', 'body.user_data', 'string', 'absent', 'cloud-init user data: in the current Lambda API, not in this client'),
  k('lambda', 'launch', 'body.tags', 'array', 'absent', 'instance tags: in the current Lambda API, not in this client'),
  // Rows named `<cloud> image-disk` hold only for the second life, whose create carries --image/--disk-gb.
  k('lambda image-disk', 'launch', 'body.image', 'object', 'absent', '`image: {id}` or `{family}`: in the current Lambda API, not in this client'),
];
