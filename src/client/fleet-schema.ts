/** The zod schema of a fleet shape (CLI and config files: zod stays at the edges). */
import { z } from 'zod';
import { MAX_COUNT, shapeProblems, type FleetShape } from '../core/fleet/types';
import { vmOptionsSchema } from './vm-spec';

const finite = z.number().refine(Number.isFinite, 'must be finite');
const port = z.number().int().min(1).max(65_535);

const ready = z.union([
  z.object({ command: z.string().min(1) }).strict(),
  z.object({ http: z.object({ port: port.optional(), path: z.string().startsWith('/').optional() }).strict() }).strict(),
  z.object({ tcp: z.object({ port: port.optional() }).strict() }).strict(),
]);

const bootstrap = z
  .object({
    verify: z.array(z.string().min(1)).default([]),
    start: z.string().min(1),
    ready,
    timeout: finite.refine((n) => n > 0, 'must be > 0 seconds'),
    portBase: port.optional(),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a shell variable name'), z.string()).optional(),
    dir: z.string().min(1).optional(),
  })
  .strict();

const group = z
  .object({
    id: z.string(),
    role: z.string().min(1),
    count: z.number().int().min(0).max(MAX_COUNT),
    // THE VM spec schema, the one `start`'s flags go through.
    vm: vmOptionsSchema.default({}),
    bootstrap: bootstrap.optional(),
    onK8sFailure: z.enum(['teardown', 'keep']).optional(),
  })
  .strict();

/** A fleet shape as written by a user; `.superRefine` adds the invariants the workflow also checks. */
export const fleetShapeSchema = z
  .object({ name: z.string(), generation: z.number().int().min(0), groups: z.array(group) })
  .strict()
  .superRefine((shape, ctx) => {
    for (const message of shapeProblems(shape)) ctx.addIssue({ code: 'custom', message });
  });

/** Parse unknown input (YAML/JSON) into a shape, or throw an Error listing every problem. */
export function parseShape(input: unknown): FleetShape {
  const r = fleetShapeSchema.safeParse(input);
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => {
    const fix = (i as { params?: { fix?: unknown } }).params?.fix;
    return `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}${typeof fix === 'string' ? ` (${fix})` : ''}`;
  });
  throw new Error(`invalid fleet shape:\n  ${lines.join('\n  ')}`);
}
