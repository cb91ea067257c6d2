import { describe, expect, it } from 'vitest';
import { WORKFLOW_VERSIONING, declaredBehavior } from '../../../src/core/versioning';
import * as workflows from '../../../src/workflows';

describe('workflow versioning declarations', () => {
  it('every registered workflow declares its behaviour (a getter), and the table names only registered workflows', () => {
    const declared = Object.entries(workflows).map(([name, fn]) => [name, typeof (fn as { workflowDefinitionOptions?: unknown }).workflowDefinitionOptions]);
    expect(Object.fromEntries(declared)).toEqual(Object.fromEntries(Object.keys(WORKFLOW_VERSIONING).map((n) => [n, 'function'])));
  });

  it("declares the table's behaviour on a versioned worker and none on an unversioned one", () => {
    expect(declaredBehavior('vmWorkflow', true)).toBe('PINNED');
    expect(declaredBehavior('fleetWorkflow', true)).toBe('AUTO_UPGRADE');
    expect(declaredBehavior('vmWorkflow', false)).toBeUndefined();
  });
});
