/**
 * The running activity's logger (`Context.current().log`: the SDK's activity attributes plus the
 * VM name and cloud added by the worker's interceptor), or nothing outside an activity (unit
 * tests call activities directly).
 */
import { Context } from '@temporalio/activity';
import type { LogMetadata } from '@temporalio/common';

export function activityLog(level: 'debug' | 'info' | 'warn', message: string, meta?: LogMetadata): void {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return;
  }
  ctx.log[level](message, meta);
}
