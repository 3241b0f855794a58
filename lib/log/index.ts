/**
 * Structured logs: one JSON object per line, so `grep <id>` on a bare entity
 * id finds every event about it (fields are named `<entity>_id`). A line
 * written during an invocation also carries `request_id`, `function`,
 * `cold_start` and `trace_id` (context.ts); an error field carries its stack
 * and cause chain (errors.ts); no line prints a known secret (redact.ts).
 */

import { Clock, isoTime, systemClock } from '../clock';
import { currentInvocation } from './context';
import { serialiseError } from './errors';
import { safeStringify } from './redact';

export { currentInvocation, invocationScope, runInvocation, type InvocationFields } from './context';
export { redactValue } from './redact';

export type Level = 'debug' | 'info' | 'warn' | 'error';
export type Fields = Record<string, unknown>;

export interface Logger {
  debug(event: string, fields?: Fields): void;
  info(event: string, fields?: Fields): void;
  warn(event: string, fields?: Fields): void;
  error(event: string, fields?: Fields): void;
  child(fields: Fields): Logger;
}

const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LoggerOptions {
  level?: Level;
  write?: (line: string) => void;
  /** Epoch ms; each line's `time` is its ISO form. */
  now?: Clock;
}

/** Where lines go by default: stdout, one per write (Lambda sends each to CloudWatch Logs as one event). */
export const stdoutLine = (line: string): void => void process.stdout.write(line + '\n');

export function createLogger(base: Fields = {}, options: LoggerOptions = {}): Logger {
  const min = RANK[options.level ?? envLevel()];
  const write = options.write ?? stdoutLine;
  const now = options.now ?? systemClock;

  const emit = (level: Level, event: string, fields?: Fields) => {
    if (RANK[level] < min) return;
    // The invocation's fields first: a call site naming one of them (e.g. `function`) says it more precisely.
    const context = currentInvocation()?.fields;
    write(safeStringify({ level, time: isoTime(now()), event, ...context, ...base, ...serialise(fields) }));
  };

  return {
    debug: (e, f) => emit('debug', e, f),
    info: (e, f) => emit('info', e, f),
    warn: (e, f) => emit('warn', e, f),
    error: (e, f) => emit('error', e, f),
    child: (fields) => createLogger({ ...base, ...fields }, options),
  };
}

function envLevel(): Level {
  const level = process.env.LOG_LEVEL;
  return level && level in RANK ? (level as Level) : 'info';
}

// Errors do not survive JSON.stringify; keep their class name (callers branch on it), stack and causes.
function serialise(fields?: Fields): Fields | undefined {
  if (!fields) return fields;
  const out: Fields = {};
  for (const [key, value] of Object.entries(fields)) out[key] = value instanceof Error ? serialiseError(value) : value;
  return out;
}

export const silentLogger: Logger = createLogger({}, { write: () => undefined });
