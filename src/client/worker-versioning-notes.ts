/** `provision worker --help`: Worker Versioning on a cluster (README: "Rolling out a new worker version"). */
export const VERSIONING_NOTES = `Worker Versioning (a team's cluster; the embedded default stays unversioned): GPUPROV_WORKER_VERSIONING=1
on every worker runs it as a Worker Deployment Version: deployment GPUPROV_WORKER_DEPLOYMENT_NAME (default:
the task queue), build id <package version>-<bundle sha256 prefix>, logged at start. Launches, Ready VMs and
teardowns (vmWorkflow) stay PINNED to the version that began them (a Ready VM moves at continue-as-new);
fleets, watchers, the capacity memory and the deployment record AUTO_UPGRADE. To roll out version B:
  1. start B's workers beside A's (they poll, idle);
  2. optional ramp: temporal worker deployment set-ramping-version --deployment-name gpuprov --build-id B --percentage 10
  3. temporal worker deployment set-current-version --deployment-name gpuprov --build-id B
  4. temporal worker deployment describe-version --deployment-name gpuprov --build-id A  (DrainageStatus)
  5. stop A's workers only once A shows drained (earlier, VMs pinned to A wait for them), then
     temporal worker deployment delete-version --deployment-name gpuprov --build-id A
The first versioned rollout needs step 3 at once: until a version is current, new runs go to unversioned workers.`;
