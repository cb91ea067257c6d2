/**
 * What each scenario history recorded by record.test.ts must show, so a replay of it tests what
 * its name says. Checked before a recording is written and again by replay.test.ts.
 */
import { expect } from 'vitest';
import { activityTypes, attributesOf, count, eventTypes, shortType, workflowTypeOf, type HistoryJson } from './history-file';

export interface Claim {
  /** File under test/histories/. */
  file: string;
  /** What the history exercises, as the test names it. */
  says: string;
  check(h: HistoryJson): void;
}

const K3S_STEPS = ['readBootProbe', 'awaitApi', 'validateCluster'];
const BOOTSTRAP = ['bootstrapVerify', 'bootstrapStart', 'bootstrapAwaitReady', 'bootstrapStop'];

const signalNames = (h: HistoryJson): string[] =>
  h.events.filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED').map((e) => attributesOf(e).signalName as string);
const last = (h: HistoryJson): string => eventTypes(h).at(-1)!;
const startedAttributes = (h: HistoryJson): Record<string, unknown> => attributesOf(h.events[0]!);

function launchedAndTornDown(h: HistoryJson): void {
  expect(workflowTypeOf(h)).toBe('vmWorkflow');
  expect(activityTypes(h)).toEqual(expect.arrayContaining(['prepareAndCreate', 'releaseAt']));
  expect(last(h)).toBe('WorkflowExecutionCompleted');
}

/** Indices of the events that scheduled `activity`. */
const scheduledAt = (h: HistoryJson, activity: string): number[] =>
  h.events.flatMap((e, i) =>
    shortType(e.eventType) === 'ActivityTaskScheduled' && (attributesOf(e).activityType as { name?: string } | undefined)?.name === activity ? [i] : [],
  );

export const CLAIMS: Claim[] = [
  {
    file: 'hedged-launch.json',
    says: 'a --parallel 2 launch: two creates in flight at once, the loser released before Ready, the winner torn down',
    check: (h) => {
      launchedAndTornDown(h);
      const creates = scheduledAt(h, 'prepareAndCreate');
      expect(creates).toHaveLength(2);
      const firstDone = eventTypes(h).findIndex((t, i) => i > creates[0]! && (t === 'ActivityTaskCompleted' || t === 'ActivityTaskFailed'));
      expect(creates[1]).toBeLessThan(firstDone);
      expect(scheduledAt(h, 'releaseAt')).toHaveLength(2);
    },
  },
  {
    file: 'k3s-boot.json',
    says: 'a k3s VM whose boot script installed k3s: boot probe, API, validation, no SSH push',
    check: (h) => {
      launchedAndTornDown(h);
      expect(activityTypes(h)).toEqual(expect.arrayContaining(['k3sBootScript', ...K3S_STEPS]));
      expect(activityTypes(h)).not.toContain('pushInstaller');
    },
  },
  {
    file: 'k3s-push.json',
    says: 'a k3s VM on a cloud without boot scripts: exactly one installer push over SSH',
    check: (h) => {
      launchedAndTornDown(h);
      expect(activityTypes(h)).toEqual(expect.arrayContaining(K3S_STEPS));
      expect(activityTypes(h).filter((a) => a === 'pushInstaller')).toHaveLength(1);
      expect(activityTypes(h)).not.toContain('k3sBootScript');
    },
  },
  {
    file: 'fleet-scale.json',
    says: 'a fleet applied with 1 node, scaled to 2 and back to 1, then torn down: 2 children started and ended, bootstraps run and stopped, 2 shape updates',
    check: (h) => {
      expect(workflowTypeOf(h)).toBe('fleetWorkflow');
      expect(count(h, 'StartChildWorkflowExecutionInitiated')).toBe(2);
      expect(count(h, 'ChildWorkflowExecutionStarted')).toBe(2);
      // The fleet learns a child's end from its `slotEvent` signal, which precedes the child's
      // completion: the last child may complete after the fleet did.
      expect(count(h, 'ChildWorkflowExecutionCompleted')).toBeGreaterThanOrEqual(1);
      expect(signalNames(h).filter((n) => n === 'slotEvent')).toHaveLength(4); // each child: ready, then terminated
      expect(signalNames(h)).toContain('teardown');
      expect(count(h, 'WorkflowExecutionUpdateCompleted')).toBe(2);
      expect(count(h, 'SignalExternalWorkflowExecutionInitiated')).toBe(2); // each child's teardown
      expect(activityTypes(h)).toEqual(expect.arrayContaining(BOOTSTRAP));
      expect(last(h)).toBe('WorkflowExecutionCompleted');
    },
  },
  {
    file: 'fleet-slot.json',
    says: 'a fleet slot (child vmWorkflow): launched, reported ready and its end to the fleet by signal',
    check: (h) => {
      launchedAndTornDown(h);
      expect(startedAttributes(h).parentWorkflowExecution).toBeDefined();
      expect(count(h, 'SignalExternalWorkflowExecutionInitiated')).toBe(2);
    },
  },
  {
    file: 'continue-as-new.run1.json',
    says: 'a Ready VM whose history grew past continueAsNewAfterEvents: launch, then continued as new',
    check: (h) => {
      expect(workflowTypeOf(h)).toBe('vmWorkflow');
      expect(activityTypes(h)).toContain('prepareAndCreate');
      expect(activityTypes(h)).toContain('observeVm'); // health checks while Ready
      expect(activityTypes(h)).not.toContain('releaseAt');
      expect(last(h)).toBe('WorkflowExecutionContinuedAsNew');
    },
  },
  {
    file: 'continue-as-new.run2.json',
    says: 'the run it continued as: carried Ready state, no launch, teardown',
    check: (h) => {
      expect(workflowTypeOf(h)).toBe('vmWorkflow');
      expect(startedAttributes(h).continuedExecutionRunId).toEqual(expect.any(String));
      expect(activityTypes(h)).not.toContain('prepareAndCreate');
      expect(activityTypes(h)).toContain('releaseAt');
      expect(last(h)).toBe('WorkflowExecutionCompleted');
    },
  },
  {
    file: 'preempt-replace.run1.json',
    says: 'a Ready --recover VM told it is preempted with a deadline ahead: no teardown, continued as new at once',
    check: (h) => {
      expect(workflowTypeOf(h)).toBe('vmWorkflow');
      expect(signalNames(h)).toContain('instanceLost');
      expect(activityTypes(h)).not.toContain('releaseAt');
      expect(last(h)).toBe('WorkflowExecutionContinuedAsNew');
    },
  },
  {
    file: 'preempt-replace.run2.json',
    says: 'the replacement run: a launch beside the retiring instance, its deletion (a timer to the deadline cut short at Ready), teardown',
    check: (h) => {
      expect(workflowTypeOf(h)).toBe('vmWorkflow');
      expect(startedAttributes(h).continuedExecutionRunId).toEqual(expect.any(String));
      expect(scheduledAt(h, 'prepareAndCreate')).toHaveLength(1);
      expect(scheduledAt(h, 'releaseAt')).toHaveLength(2); // the retiring instance, then the teardown
      expect(eventTypes(h)).toContain('TimerStarted');
      expect(last(h)).toBe('WorkflowExecutionCompleted');
    },
  },
];
