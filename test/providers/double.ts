/**
 * The shape every HTTP cloud's test double shares: the adapter wired to its stateful fixture,
 * with `countLive`, `arm` and `close` for the conformance battery and cross-cloud workflow tests.
 * Each `test/providers/<cloud>/double.ts` says only what is its own (routes, error bodies).
 */
import type { ErrorKind } from '../../src/core/errors';
import { HttpError } from '../../src/providers/http';
import type { ResourceRequest } from '../../src/core/provider';
import type { Primitive } from './conformance';

/** A provider wired to its fixture server. */
export interface Double<P, S> {
  provider: P;
  server: S;
  countLive(): Promise<number>;
  /** Make the next `primitive` call fail as the vendor does for `kind`. */
  arm(kind: ErrorKind, primitive: Primitive): Promise<void>;
  /** The adapter for another deployment against the same fixture (the conformance battery's two-deployment case). */
  twin?(deployment: string): P;
  /** Side resources at the fixture (keys, groups, firewalls, scripts, volumes), across deployments. */
  countSide?(): Promise<number>;
  close(): Promise<void>;
}

/** A double that also names a request that plans and the error kinds it can produce. */
export interface PlannedDouble<P, S> extends Double<P, S> {
  request: ResourceRequest;
  kinds: { kind: ErrorKind; primitive: Primitive }[];
}

interface Fixture {
  liveCount(): number | Promise<number>;
  close(): Promise<void>;
}

/** Wire `provider` to `server`; `arm` queues the vendor's error answer at the fixture. */
export function wireDouble<P, S extends Fixture>(provider: P, server: S, arm: (kind: ErrorKind, primitive: Primitive) => void): Double<P, S> {
  return {
    provider,
    server,
    countLive: async () => server.liveCount(),
    arm: async (kind, primitive) => arm(kind, primitive),
    close: () => server.close(),
  };
}

/** For fixtures that pick their own route and fault per (kind, primitive): `faultFor` + `server.arm`. */
export function wireFaultDouble<P, R, F, S extends Fixture & { arm(route: R, fault: F): void }>(
  provider: P,
  server: S,
  faultFor: (kind: ErrorKind, primitive: Primitive) => { route: R; fault: F },
): Double<P, S> {
  return wireDouble(provider, server, (kind, primitive) => {
    const { route, fault } = faultFor(kind, primitive);
    server.arm(route, fault);
  });
}

/**
 * For fixtures armed with a documented error body on a route: the first route each primitive
 * calls, and the fixture's body for each error kind.
 */
export function routeArmer<K>(
  cloud: string,
  routes: Record<Primitive, readonly [method: string, pattern: string] | undefined>,
  bodies: Partial<Record<ErrorKind, K>>,
  server: { armError(body: K, method: string, pattern: string): void },
): (kind: ErrorKind, primitive: Primitive) => void {
  return (kind, primitive) => {
    const route = routes[primitive];
    const body = bodies[kind];
    if (!route || body === undefined) throw new Error(`${cloud} double cannot arm ${kind} at ${primitive}`);
    server.armError(body, route[0], route[1]);
  };
}

/*
 * The classification tables of the Lambda, RunPod, Prime Intellect, Vast.ai and DigitalOcean
 * tests build errors in the argument order of the per-cloud error classes these adapters had
 * before the shared HttpError; these keep those tables as they were.
 */

/** `(status, body, retryAfter?)`: the op is irrelevant to Lambda's classification. */
export class StatusBodyHttpError extends HttpError {
  constructor(status: number, body: unknown, retryAfter?: string) {
    super('call', status, body, retryAfter);
  }
}

/** `(status, body, op, retryAfter?)`. */
export class StatusFirstHttpError extends HttpError {
  constructor(status: number, body: unknown, op: string, retryAfter?: string) {
    super(op, status, body, retryAfter);
  }
}

/** `(op, status, body, { retryAfter?, ratelimitReset? })`. */
export class RateLimitHttpError extends HttpError {
  constructor(op: string, status: number, body: unknown, headers: { retryAfter?: string; ratelimitReset?: string } = {}) {
    super(op, status, body, headers.retryAfter, headers.ratelimitReset);
  }
}
