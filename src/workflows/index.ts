/** Every workflow the worker registers (the worker bundles this file). */
export { vmWorkflow } from './vm';
export { launchWorkflow } from './launch';
export { teardownWorkflow } from './teardown';
export { blockOfferingsWorkflow, offersWorkflow } from './offers';
export { fleetWorkflow } from './fleet';
export { accountWatcherWorkflow } from './watcher';
export { capacityMemoryWorkflow } from './capacity-memory';
export { deploymentRecordWorkflow } from './deployment-record';
