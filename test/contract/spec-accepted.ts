/**
 * Every place where our adapters' requests or our fixtures' answers knowingly differ from a vendor's
 * published API definition, with the reason: the definition is known stale or wrong, and the
 * evidence says so (the vendor's own client, the vendor's own example, the real API's answer).
 * spec.test.ts fails on a finding not listed here, and on a row of a judged cloud that no longer occurs.
 */

/** One place where an exchange breaks the definition (spec_judge.py's finding, with its cloud). */
export interface SpecFinding {
  cloud: string;
  /** `request` (what our adapter sent) or `answer` (what our fixture served). */
  where: 'request' | 'answer';
  method: string;
  /** The definition's path template (OpenAPI, Discovery) or operation name (botocore). */
  template: string;
  /** `body.droplets[].networks`, `query.page`, `200 body…`, `status`, `content-type`. */
  at: string;
  /** The rule broken, without the offending value: `required vpc_uuid`, `type "object"`, `enum [...]`. */
  rule: string;
}

export interface AcceptedDifference extends SpecFinding {
  why: string;
}

export const specKey = (f: SpecFinding): string => `${f.cloud} ${f.where} ${f.method} ${f.template} ${f.at}: ${f.rule}`;

const a = (cloud: string, where: SpecFinding['where'], method: string, template: string, at: string, rule: string, why: string): AcceptedDifference => ({
  cloud,
  where,
  method,
  template,
  at,
  rule,
  why,
});

export const SPEC_ACCEPTED: AcceptedDifference[] = [
  // Vast.ai's definition (vast-ai/docs) disagrees with the vendor's own SDK, which the API evidently serves.
  a(
    'vastai',
    'request',
    'POST',
    '/api/v0/bundles',
    'body.type',
    'enum ["ondemand", "bid", "reserved"]',
    'the definition is self-contradictory: its own example for this operation sends "on-demand", and the official SDK (vastai==1.9.1, vastai/api/offers.py search_offers) sends "on-demand" by default; no vendor client sends "ondemand"',
  ),
  a(
    'vastai',
    'request',
    'POST',
    '/api/v0/bundles',
    'body.order',
    'minItems 2',
    'minItems/maxItems 2 sit on the outer list while its description says each entry has two elements; the official SDK sends one entry ([["score", "desc"]])',
  ),
  a(
    'vastai',
    'request',
    'PUT',
    '/api/v0/asks/{id}',
    'body.env',
    'type "string"',
    'the official SDK (vastai==1.9.1, vastai/api/instances.py) turns a Docker-flag string into exactly this object ({"-p 22:22": "1", NAME: value}, vastai/utils.py parse_env) before sending: the object is the wire form its every create uses',
  ),
  a(
    'vastai',
    'request',
    'PUT',
    '/api/v0/asks/{id}',
    'body.runtype',
    'enum ["ssh", "jupyter", "args", "ssh_proxy", "ssh_direct", "jupyter_proxy", "jupyter_direct"]',
    'the official SDK sends "ssh_direc ssh_proxy" for `--ssh --direct` (vastai/api/instances.py), the value our create copies; the enum lists single modes only',
  ),
  a(
    'hyperstack',
    'request',
    'POST',
    '/core/virtual-machines',
    'body.security_rules[]',
    'required virtual_machine_id',
    "a rule sent with the create cannot name the VM it creates; the hyperstack SDK (hyperstack==1.56.1a0, generated from the vendor's newer definition) types these items as CreateSecurityRulePayload, which has no virtual_machine_id. The GitHub copy (hyperstack-sdk-go, June 2026) reuses the per-VM rule schema here",
  ),
];
