/**
 * Activity interceptor: every line logged for an activity (by the SDK or by the activity's `log`)
 * names the VM and the cloud its input is about. Activities take an offer, a location (`at`,
 * `location`) or an input naming them; the VM name otherwise comes from the workflow id.
 */
import type { Context } from '@temporalio/activity';
import type { ActivityInterceptors } from '@temporalio/worker';
import { vmNameOf } from './log-format';

interface Named {
  vmName?: string;
  cloud?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

function field(o: unknown, key: string): unknown {
  return typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[key] : undefined;
}

/** The VM name and cloud of an activity's arguments, where one of them says. */
export function namedBy(args: readonly unknown[]): Named {
  const out: Named = {};
  for (const a of args) {
    out.cloud ??=
      str(field(a, 'cloud')) ?? str(field(field(a, 'at'), 'cloud')) ?? str(field(field(a, 'location'), 'cloud')) ?? str(field(field(a, 'offer'), 'cloud'));
    out.vmName ??= str(field(a, 'vmName'));
  }
  return out;
}

/** For `interceptors.activity` of `Worker.create`. */
export function activityLogAttributes(ctx: Context): ActivityInterceptors {
  let named: Named = {};
  return {
    inbound: {
      async execute(input, next) {
        named = namedBy(input.args);
        return next(input);
      },
    },
    outbound: {
      getLogAttributes(attrs, next) {
        const vmName = named.vmName ?? vmNameOf(ctx.info.workflowExecution?.workflowId);
        return next({ ...attrs, ...(vmName ? { vmName } : {}), ...(named.cloud ? { cloud: named.cloud } : {}) });
      },
    },
  };
}
