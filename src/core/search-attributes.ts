/**
 * The search attributes a VM workflow is indexed by (registered on the server, see
 * SEARCH_ATTRIBUTES), and what of its state they index. Every upsert is one history event, so a
 * launch upserts only what changed, and only stages worth a filter: the status query and the Web
 * UI's details keep the exact stage. Pure.
 *
 * | the VM's stage            | `GpuprovStage`                                               |
 * |---------------------------|--------------------------------------------------------------|
 * | `booting`, `connecting`   | `creating` (an attempt's sub-stages: no upsert of their own)  |
 * | any other                 | itself                                                       |
 *
 * | at                        | indexed before the first upsert                                            |
 * |---------------------------|----------------------------------------------------------------------------|
 * | a run's start             | what the start gave (`GpuprovClient.start` and the fleet give the name and `planning`) |
 * | a continued run           | what the previous run had indexed (Temporal carries search attributes)     |
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { Stage } from './api';

/** Typed keys of the five Keyword search attributes (registered on the server, see SEARCH_ATTRIBUTES). */
export const SA = {
  vmName: defineSearchAttributeKey('GpuprovVmName', SearchAttributeType.KEYWORD),
  stage: defineSearchAttributeKey('GpuprovStage', SearchAttributeType.KEYWORD),
  cloud: defineSearchAttributeKey('GpuprovCloud', SearchAttributeType.KEYWORD),
  region: defineSearchAttributeKey('GpuprovRegion', SearchAttributeType.KEYWORD),
  instanceType: defineSearchAttributeKey('GpuprovInstanceType', SearchAttributeType.KEYWORD),
} as const;

/** The stage as `GpuprovStage` indexes it (table above). */
export function indexedStage(stage: Stage): Stage {
  return stage === 'booting' || stage === 'connecting' ? 'creating' : stage;
}

/** The values a VM workflow is indexed by; absent ones are not indexed. */
export interface IndexedVm {
  vmName?: string;
  stage?: string;
  cloud?: string;
  region?: string;
  instanceType?: string;
}

/** The key of what is indexed: equal keys need no upsert. */
export function indexKey(v: IndexedVm): string {
  return JSON.stringify([v.vmName, v.stage, v.cloud, v.region, v.instanceType]);
}

/**
 * The search attributes to start a VM workflow with (the CLI, the fleet, any client that wants a
 * launch to cost one upsert fewer): what its first stage indexes. A start without them works the same.
 */
export function startAttributes(vmName: string): [{ key: typeof SA.vmName; value: string }, { key: typeof SA.stage; value: string }] {
  return [
    { key: SA.vmName, value: vmName },
    { key: SA.stage, value: 'planning' },
  ];
}
