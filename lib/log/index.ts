/**
 * Structured logs: one JSON object per line, so `grep <id>` on a bare entity
 * id finds every event about it (fields are named `<entity>_id`).
 */

import { Clock, isoTime, systemClock } from '../clock';

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

export function createLogger(base: Fields = {}, options: LoggerOptions = {}): Logger {
  const min = RANK[options.level ?? envLevel()];
  const write = options.write ?? ((line: string) => process.stdout.write(line + '\n'));
  const now = options.now ?? systemClock;

  const emit = (level: Level, event: string, fields?: Fields) => {
    if (RANK[level] < min) return;
    write(JSON.stringify({ level, time: isoTime(now()), event, ...base, ...serialise(fields) }));
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

// Errors do not survive JSON.stringify; keep their class name, which callers branch on.
function serialise(fields?: Fields): Fields | undefined {
  if (!fields) return fields;
  const out: Fields = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] =
      value instanceof Error
        ? { name: value.name, message: value.message, code: (value as { code?: unknown }).code }
        : value;
  }
  return out;
}

export const silentLogger: Logger = createLogger({}, { write: () => undefined });
