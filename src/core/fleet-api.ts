/**
 * The fleet's public workflow API: IDs, input, status, the `applyShape` Update, the `status`
 * query, the `teardown` signal, and the `slotEvent` signal a child vmWorkflow sends its fleet.
 * Both the client and the workflows import this module; it holds no logic.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { FleetTuning } from './fleet/backoff';
import type { EffectKind, FleetState, SlotStage } from './fleet/state';
import type { FleetShape } from './fleet/types';
import type { SshEndpoint } from './provider';
import type { Stage } from './api';
import type { Tuning } from './tuning';

export const fleetWorkflowId = (name: string): string => `fleet-${name}`;

/** One driver observation kept in status (compact; bounded). */
export interface FleetLogEntry {
  at: string;
  slot: string;
  attempt: number;
  what: string;
}

/** State carried across continue-as-new. */
export interface FleetCarried {
  state: FleetState;
  desired: FleetShape;
  down: boolean;
  log: FleetLogEntry[];
}

export interface FleetWorkflowInput {
  shape: FleetShape;
  tuning?: Partial<FleetTuning>;
  /** Timings of every slot's vmWorkflow. */
  vmTuning?: Partial<Tuning>;
  /** Set only by continue-as-new. */
  carried?: FleetCarried;
}

export interface SlotStatus {
  slot: string;
  group: string;
  index: number;
  role: string;
  attempt: number;
  /** The attempt's vmWorkflow ID. */
  workflowId: string;
  stage: SlotStage;
  intent: 'active' | 'deleting';
  ready: boolean;
  /** The attempt runs the latest desired spec of its slot (false while a replacement is due). */
  current: boolean;
  pending?: EffectKind;
  failures: number;
  restartAt?: string;
  failedReason?: string;
  endpoint?: SshEndpoint;
  /** The host key the launch pinned (`<type> <base64>`, public). */
  hostKey?: string;
  bootstrap?: {
    state: string;
    stage?: string;
    lastStdoutSeq?: number;
    lastStderrSeq?: number;
    startedAt?: string;
    readyAt?: string;
    /** The sequence-numbered log on the node (relative paths are under the login home). */
    logPath: string;
  };
}

/** Snapshot returned by the `status` query. */
export interface FleetStatus {
  apiVersion: number;
  name: string;
  generation: number;
  observedGeneration: number;
  /** Every desired slot ready with its exact desired spec, nothing pending, nothing extra. */
  converged: boolean;
  /** The `teardown` signal was received. */
  down: boolean;
  slots: SlotStatus[];
  log: FleetLogEntry[];
}

export interface ApplyShapeResult {
  generation: number;
  /** False when the same generation with the same content was applied again. */
  changed: boolean;
}

/** What a child vmWorkflow reports to its fleet on `ready` and on every terminal stage. */
export interface SlotEvent {
  /** The child's (attempt-scoped) workflow ID. */
  workflowId: string;
  stage: Stage;
  endpoint?: SshEndpoint;
  hostKey?: string;
  /** `SHA256:…` of the worker key the VM was created with (its bootstrap checks it). */
  workerKeyFingerprint?: string;
  error?: { kind: string; message: string };
  /** The VM was torn down because its spend reached its `--budget` (absent otherwise). */
  budgetReached?: boolean;
}

/** Replace the desired shape (revision contract enforced by the validator). */
export const applyShapeUpdate = defineUpdate<ApplyShapeResult, [FleetShape]>('applyShape');
/** Full fleet snapshot. */
export const fleetStatusQuery = defineQuery<FleetStatus>('status');
/** Delete every slot, then complete. */
export const fleetTeardownSignal = defineSignal('teardown');
/** Child → fleet: an attempt reached `ready` or ended. */
export const slotEventSignal = defineSignal<[SlotEvent]>('slotEvent');
