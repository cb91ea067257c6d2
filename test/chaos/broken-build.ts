/**
 * The chaos kit's deliberately broken build (`--broken`): a workflow interceptor module, bundled
 * with gpuprov's workflows only by the kit (`brokenBundle` in kit.ts), that drops the compensation
 * of failed launch attempts. While the VM is in stage `compensating`, the `releaseAt` activity is
 * never scheduled and its call resolves at once, as if the delete had run. The oracle must catch
 * it (chaos.test.ts). Runs in the workflow sandbox: workflow-safe imports only.
 */
import { workflowInfo, type ActivityInput, type Next, type WorkflowInterceptorsFactory, type WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';
import { SA } from '../../src/core/search-attributes';

/** The activity a compensation runs. */
const COMPENSATION = new Set(['releaseAt']);

function skipCompensation(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
  const compensating = workflowInfo().typedSearchAttributes.get(SA.stage) === 'compensating';
  return compensating && COMPENSATION.has(input.activityType) ? Promise.resolve(undefined) : next(input);
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ outbound: [{ scheduleActivity: skipCompensation }] });
