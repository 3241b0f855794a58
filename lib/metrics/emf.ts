import { dimensionSets, MetricName, METRICS, NAMESPACE } from './catalog';

/**
 * CloudWatch Embedded Metric Format, written and read: a log line that is a
 * JSON object with an `_aws` member naming the metrics and dimension sets;
 * the values are the line's own members. CloudWatch Logs turns the line into
 * metric data points with no API call
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
 * A line whose dimension has no value is dropped whole by CloudWatch, so
 * `emfRecord` gives every dimension one (`unknown` at worst).
 */

export interface MetricDirective {
  Namespace: string;
  Dimensions: string[][];
  Metrics: Array<{ Name: string; Unit: string }>;
}

export interface EmfRecord {
  _aws: { Timestamp: number; CloudWatchMetrics: MetricDirective[] };
  [member: string]: unknown;
}

/** CloudWatch's limits on one line: metrics per directive, dimensions per set. */
export const MAX_METRICS_PER_LINE = 100;
export const MAX_DIMENSIONS_PER_SET = 30;

/**
 * One EMF record: the metrics with a finite value, grouped by their dimension
 * sets (one directive per group), the dimension values and properties as
 * members. Milliseconds below zero (two clocks) count as 0. Undefined when no
 * value is left.
 */
export function emfRecord(
  values: Partial<Record<MetricName, number | undefined>>,
  dimensions: Record<string, string | undefined>,
  properties: Record<string, unknown>,
  timestamp: number,
): EmfRecord | undefined {
  const groups = new Map<string, MetricDirective>();
  const members: Record<string, unknown> = {};
  let domain: string | undefined;
  for (const [name, raw] of Object.entries(values) as Array<[MetricName, number | undefined]>) {
    const spec = METRICS[name];
    if (!spec || typeof raw !== 'number' || !Number.isFinite(raw)) continue;
    // One line, one domain: `domain` is a member of the line (the caller splits: lib/metrics/index.ts).
    if ((domain ??= spec.domain) !== spec.domain) throw new Error(`${name} is not a ${domain} metric`);
    const sets = dimensionSets(name);
    const key = JSON.stringify(sets);
    const group = groups.get(key) ?? { Namespace: NAMESPACE, Dimensions: sets, Metrics: [] };
    groups.set(key, group);
    if (group.Metrics.length >= MAX_METRICS_PER_LINE) continue;
    group.Metrics.push({ Name: name, Unit: spec.unit });
    members[name] = spec.unit === 'Milliseconds' ? Math.max(0, Math.round(raw)) : raw;
  }
  if (groups.size === 0) return undefined;
  const dims: Record<string, string> = {};
  for (const group of groups.values())
    for (const set of group.Dimensions) for (const d of set) dims[d] = clean(d === 'domain' ? domain : dimensions[d]);
  return {
    ...properties,
    ...dims,
    ...members,
    _aws: { Timestamp: timestamp, CloudWatchMetrics: [...groups.values()] },
  };
}

/** A dimension value CloudWatch takes: non-empty, at most 1024 characters (ours are short words). */
function clean(value: string | undefined): string {
  const text = (value ?? '').trim().slice(0, 250);
  return text || 'unknown';
}

/** One data point read back from a line: what CloudWatch would store. */
export interface MetricPoint {
  name: string;
  unit: string;
  value: number;
  timestamp: number;
  /** Every dimension of the line's directive for this metric (the widest set), by name. */
  dimensions: Record<string, string>;
}

/**
 * The data points of one log line, or none when it is not an EMF record of
 * our namespace (a plain log line, a prefix from the runtime before the JSON).
 * Reads what CloudWatch reads: `_aws.CloudWatchMetrics[].Metrics[].Name` and
 * the member of that name.
 */
export function parseEmfLine(line: string): MetricPoint[] {
  const start = line.indexOf('{');
  if (start < 0 || !line.includes('"_aws"')) return [];
  let record: EmfRecord;
  try {
    record = JSON.parse(line.slice(start));
  } catch {
    return [];
  }
  const aws = record?._aws;
  if (!aws || !Array.isArray(aws.CloudWatchMetrics) || typeof aws.Timestamp !== 'number') return [];
  const points: MetricPoint[] = [];
  for (const directive of aws.CloudWatchMetrics) {
    if (directive?.Namespace !== NAMESPACE || !Array.isArray(directive.Metrics)) continue;
    const names = [...new Set((directive.Dimensions ?? []).flat())];
    const dimensions = Object.fromEntries(names.map((d) => [d, String(record[d])]));
    for (const metric of directive.Metrics) {
      const value = record[metric?.Name];
      if (typeof value === 'number' && Number.isFinite(value))
        points.push({ name: metric.Name, unit: metric.Unit, value, timestamp: aws.Timestamp, dimensions });
    }
  }
  return points;
}
