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

/**
 * The epoch ms of an ISO-8601 UTC time (`…Z`, 0-3 fraction digits); `undefined`
 * for anything else: offsets, local times, numbers, and dates that do not exist.
 */
export function parseIsoTime(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = ISO_UTC.exec(value);
  if (!m) return undefined;
  const ms = Date.parse(value);
  // Date.parse rolls 2026-02-30 into March and T24:00 into the next day: a
  // time that does not read back the same is not a time.
  if (!Number.isFinite(ms) || isoTime(ms) !== `${m[1]}.${(m[2] ?? '').padEnd(3, '0')}Z`) return undefined;
  return ms;
}

const ISO_UTC = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,3}))?Z$/;
