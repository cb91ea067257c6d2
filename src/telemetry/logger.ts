/**
 * The worker's logger: installed as the SDK runtime's logger (src/telemetry/index.ts), so the
 * SDK's own lines, the core's forwarded lines, the workflows' replay-safe `log` and the
 * activities' `log` all come out here, one line each (log-format.ts).
 */
import type { Logger, LogLevel, LogMetadata } from '@temporalio/common';
import { InputError } from '../core/errors';
import { jsonLine, LOG_LEVELS, severity, textLine, toEntry } from './log-format';

export interface GpuprovLoggerOptions {
  /** Lines below this level are dropped. */
  level: LogLevel;
  /** `json`: one object per line (files, pipes); `text`: plain lines (a terminal). */
  format: 'json' | 'text';
  /** Takes one line, newline included. */
  write: (line: string) => void;
}

export class GpuprovLogger implements Logger {
  private readonly min: number;

  constructor(private readonly o: GpuprovLoggerOptions) {
    this.min = severity(o.level);
  }

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const entry = toEntry(level, message, meta);
    if (severity(entry.level) >= this.min) this.emit(entry);
  }

  /** An INFO line written whatever the level (the line daemons wait for, fatal start-up errors). */
  announce(message: string, meta?: LogMetadata, level: LogLevel = 'INFO'): void {
    this.emit(toEntry(level, message, meta));
  }

  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }

  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }

  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }

  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }

  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }

  private emit(entry: ReturnType<typeof toEntry>): void {
    this.o.write(`${this.o.format === 'json' ? jsonLine(entry) : textLine(entry)}\n`);
  }
}

/** GPUPROV_LOG_LEVEL (trace, debug, info, warn, error; any case), default info; anything else is bad input. */
export function logLevelFromEnv(env: NodeJS.ProcessEnv): LogLevel {
  const raw = env.GPUPROV_LOG_LEVEL?.trim();
  if (!raw) return 'INFO';
  const level = (raw.toUpperCase() === 'WARNING' ? 'WARN' : raw.toUpperCase()) as LogLevel;
  if (!LOG_LEVELS.includes(level)) {
    throw new InputError(
      'GPUPROV_LOG_LEVEL',
      `unknown log level "${raw}"`,
      `set GPUPROV_LOG_LEVEL to one of ${LOG_LEVELS.map((l) => l.toLowerCase()).join(', ')}`,
    );
  }
  return level;
}
