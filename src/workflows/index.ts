/** Every workflow the worker registers (the worker bundles this file). */
import { vmWorkflow } from './vm';
import { launchWorkflow } from './launch';
import { teardownWorkflow } from './teardown';
import { blockOfferingsWorkflow, offersWorkflow } from './offers';
import { fleetWorkflow } from './fleet';
import { accountWatcherWorkflow } from './watcher';
import { capacityMemoryWorkflow } from './capacity-memory';
import { ledgerPageWorkflow } from './ledger-page';
import { deploymentRecordWorkflow } from './deployment-record';
import { declareVersioning } from './versioning';

declareVersioning({
  vmWorkflow,
  launchWorkflow,
  teardownWorkflow,
  offersWorkflow,
  blockOfferingsWorkflow,
  fleetWorkflow,
  accountWatcherWorkflow,
  capacityMemoryWorkflow,
  ledgerPageWorkflow,
  deploymentRecordWorkflow,
});

export {
  vmWorkflow,
  launchWorkflow,
  teardownWorkflow,
  blockOfferingsWorkflow,
  offersWorkflow,
  fleetWorkflow,
  accountWatcherWorkflow,
  capacityMemoryWorkflow,
  ledgerPageWorkflow,
  deploymentRecordWorkflow,
};
