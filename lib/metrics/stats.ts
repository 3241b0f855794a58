import type { MetricName } from './catalog';
import type { MetricPoint } from './emf';

/**
 * CloudWatch's statistics over data points read back (local.ts): what an
 * alarm on the metric would compute for a period. Percentiles by nearest
 * rank (CloudWatch's are close estimates of the same).
 */

export type Statistic = 'Sum' | 'SampleCount' | 'Maximum' | 'p50' | 'p90' | 'p99';

/** The points of one metric within [from, to), optionally of one dimension's value. */
export function select(
  points: readonly MetricPoint[],
  name: MetricName,
  from: number,
  to: number,
  where: Record<string, string> = {},
): MetricPoint[] {
  return points.filter(
    (p) =>
      p.name === name &&
      p.timestamp >= from &&
      p.timestamp < to &&
      Object.entries(where).every(([d, v]) => p.dimensions[d] === v),
  );
}

export function statistic(values: readonly number[], stat: Statistic): number | undefined {
  if (values.length === 0) return undefined;
  switch (stat) {
    case 'Sum':
      return values.reduce((a, b) => a + b, 0);
    case 'SampleCount':
      return values.length;
    case 'Maximum':
      return Math.max(...values);
    default: {
      const sorted = [...values].sort((a, b) => a - b);
      const q = Number(stat.slice(1)) / 100;
      return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
    }
  }
}

/** `count` periods of `periodMs` ending with the one holding `now`, oldest first, each with its values. */
export function periods(
  points: readonly MetricPoint[],
  now: number,
  periodMs: number,
  count: number,
): Array<{ start: number; values: number[] }> {
  const end = Math.floor(now / periodMs) * periodMs + periodMs;
  const out = Array.from({ length: count }, (_, i) => ({
    start: end - (count - i) * periodMs,
    values: [] as number[],
  }));
  for (const p of points) {
    const i = count - Math.ceil((end - p.timestamp) / periodMs);
    if (i >= 0 && i < count) out[i].values.push(p.value);
  }
  return out;
}

/** Values by one dimension's value (outcome, cause, state, function…), largest sum first. */
export function byDimension(points: readonly MetricPoint[], dimension: string): Array<[string, number[]]> {
  const groups = new Map<string, number[]>();
  for (const p of points) {
    const key = p.dimensions[dimension] ?? 'unknown';
    const values = groups.get(key) ?? [];
    values.push(p.value);
    groups.set(key, values);
  }
  const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
  return [...groups].sort((a, b) => sum(b[1]) - sum(a[1]) || a[0].localeCompare(b[0]));
}
