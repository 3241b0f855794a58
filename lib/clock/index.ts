/**
 * The one clock of the service. Every service takes a `Clock` (epoch
 * milliseconds, like `Date.now`) as an injected dependency, so tests move time
 * without faking timers. At every boundary (DynamoDB items, API bodies, logs)
 * a point in time is written as an ISO-8601 UTC string with milliseconds
 * (`isoTime`), which sorts as it reads. Numbers are stored only where DynamoDB
 * needs them as numbers: TTL attributes (epoch seconds) and sort keys that are
 * bucket numbers.
 */
export type Clock = () => number;

export const systemClock: Clock = Date.now;

/** An instant as the service writes it at a boundary: `2026-12-03T08:44:40.123Z`. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** The epoch ms of an ISO time the service wrote; `undefined` for anything else. */
export function parseIsoTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || !ISO_UTC.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;
