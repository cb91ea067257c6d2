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

export const SPEC_ACCEPTED: AcceptedDifference[] = [];
void a;
