import { describe, expect, it } from 'vitest';
import { WORKFLOW_VERSIONING } from '../../../src/core/versioning';
import * as workflows from '../../../src/workflows';

describe('workflow versioning declarations', () => {
  it('every registered workflow carries the behaviour of the table, and the table names only registered workflows', () => {
    const declared = Object.fromEntries(
      Object.entries(workflows).map(([name, fn]) => [
        name,
        (fn as { workflowDefinitionOptions?: { versioningBehavior?: string } }).workflowDefinitionOptions?.versioningBehavior,
      ]),
    );
    expect(declared).toEqual(WORKFLOW_VERSIONING);
  });
});
