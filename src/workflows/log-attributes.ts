/**
 * Workflow interceptor module, bundled beside the workflows (src/server/workflow-bundle.ts): every
 * line the SDK logs for a workflow (`log` and its own lifecycle lines) names the VM and its cloud,
 * read from the workflow's search attributes (kept current by `VmContext.setStage`). Pure reads:
 * no command, nothing that differs on replay.
 */
import { workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { SA } from '../core/search-attributes';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      getLogAttributes(input, next) {
        const sa = workflowInfo().typedSearchAttributes;
        const vmName = sa.get(SA.vmName);
        const cloud = sa.get(SA.cloud);
        return next({ ...(vmName ? { vmName } : {}), ...(cloud ? { cloud } : {}), ...input });
      },
    },
  ],
});
