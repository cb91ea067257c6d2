import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Typed keys of the five Keyword search attributes (registered on the server, see SEARCH_ATTRIBUTES). */
export const SA = {
  vmName: defineSearchAttributeKey('GpuprovVmName', SearchAttributeType.KEYWORD),
  stage: defineSearchAttributeKey('GpuprovStage', SearchAttributeType.KEYWORD),
  cloud: defineSearchAttributeKey('GpuprovCloud', SearchAttributeType.KEYWORD),
  region: defineSearchAttributeKey('GpuprovRegion', SearchAttributeType.KEYWORD),
  instanceType: defineSearchAttributeKey('GpuprovInstanceType', SearchAttributeType.KEYWORD),
} as const;
