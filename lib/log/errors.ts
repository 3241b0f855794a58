/**
 * An error as a log line holds it: its class name (callers branch on it), its
 * message, its `code` when it has one, its stack, and its `cause` chain, each
 * cause the same way. Bounded: at most MAX_CAUSE_DEPTH causes, MAX_STACK_LINES
 * lines of each stack, a cycle cut where it closes. Only these named
 * properties are copied, never an error's other fields (an SDK error's
 * request, a client error's config): what they hold is not ours to print.
 * Every string still goes through the line's redaction (redact.ts).
 */

export const MAX_CAUSE_DEPTH = 5;
export const MAX_STACK_LINES = 25;
/** Errors of an AggregateError kept, each with its own chain. */
export const MAX_AGGREGATED = 5;
const MAX_MESSAGE = 2000;

export interface LoggedError {
  name: string;
  message: string;
  code?: unknown;
  stack?: string;
  cause?: LoggedError | { value: string };
  errors?: LoggedError[];
  /** The chain went on past MAX_CAUSE_DEPTH (or came back to an error already shown). */
  truncated?: true;
}

export function serialiseError(err: Error, depth = 0, seen = new Set<unknown>()): LoggedError {
  seen.add(err);
  const code = (err as { code?: unknown }).code;
  const out: LoggedError = {
    name: err.name,
    message: String(err.message).slice(0, MAX_MESSAGE),
    ...(code === undefined || typeof code === 'object' ? {} : { code }),
  };
  if (typeof err.stack === 'string')
    out.stack = err.stack
      .split('\n')
      .slice(0, MAX_STACK_LINES + 1)
      .join('\n');
  const cause = (err as { cause?: unknown }).cause;
  if (cause !== undefined) {
    if (depth >= MAX_CAUSE_DEPTH || seen.has(cause)) out.truncated = true;
    else out.cause = cause instanceof Error ? serialiseError(cause, depth + 1, seen) : { value: describe(cause) };
  }
  if (err instanceof AggregateError && Array.isArray(err.errors) && depth < MAX_CAUSE_DEPTH)
    out.errors = err.errors
      .slice(0, MAX_AGGREGATED)
      .map((e: unknown) =>
        e instanceof Error ? serialiseError(e, depth + 1, seen) : { name: 'NotAnError', message: describe(e) },
      );
  return out;
}

/** A thrown non-Error: its type and, for a primitive, its text; an object's fields are not copied. */
function describe(value: unknown): string {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return String(value).slice(0, 200);
  return `[${typeof value}]`;
}
