/**
 * Metrics as CloudWatch EMF lines on stdout (emf.ts), from the catalog of
 * catalog.ts: `emitMetrics({ ScanLatency: ms, ScanAnswersLate: 0 }, {}, { job_id })`
 * writes ONE line that is both a metric record and a log line (`event:
 * "metric"`, the invocation's request id and trace id, the ids given as
 * properties). No API call, no buffer: a line is written when the figure is
 * known, so a crash later in the invocation loses nothing.
 *
 * Only an invocation emits (a handler built by lib/http, lib/web or
 * lib/lambda): outside one (a CLI, a bench, a unit test without a scope) the
 * call does nothing, so tooling that reuses the domains' code writes no
 * metric lines. An emit never throws: a metric must never fail the work it
 * measures. docs/decisions.md, 271-272.
 */

import { systemClock, isoTime, type Clock } from '../clock';
import { currentInvocation, stdoutLine } from '../log';
import { safeStringify } from '../log/redact';
import { Dimension, MetricName, METRICS } from './catalog';
import { emfRecord } from './emf';

export { METRICS, METRIC_NAMES, NAMESPACE, type MetricName } from './catalog';

/** Where metric lines go; a test swaps `write` (and `now`) and puts them back. */
export const metricsOutput: { write: (line: string) => void; now: Clock } = { write: stdoutLine, now: systemClock };

/**
 * One line per domain of the values given (normally one). `dimensions`: the
 * values of the metrics' `by` dimensions; `function` defaults to the running
 * function. `properties`: ids and details for the reader, never dimensions.
 */
export function emitMetrics(
  values: Partial<Record<MetricName, number | undefined>>,
  dimensions: Partial<Record<Dimension, string>> = {},
  properties: Record<string, unknown> = {},
): void {
  const invocation = currentInvocation();
  if (!invocation) return;
  try {
    const now = metricsOutput.now();
    const byDomain = new Map<string, Partial<Record<MetricName, number | undefined>>>();
    for (const [name, value] of Object.entries(values) as Array<[MetricName, number]>) {
      const domain = METRICS[name]?.domain;
      if (!domain) continue;
      byDomain.set(domain, { ...byDomain.get(domain), [name]: value });
    }
    const fields = invocation.fields;
    const common = {
      service: process.env.SERVICE_NAME ?? 'torrent-scan-sync',
      stage: process.env.STAGE ?? 'unknown',
      function: fields.function,
      ...dimensions,
    };
    for (const group of byDomain.values()) {
      const record = emfRecord(
        group,
        common,
        { level: 'info', time: isoTime(now), event: 'metric', ...fields, ...properties },
        now,
      );
      if (record) metricsOutput.write(safeStringify(record));
    }
  } catch {
    // A metric is never worth a failed invocation (and a line saying so would be one more line to go wrong).
  }
}

/** Whether a line emitted now would be written (only an invocation emits): spares a read made only for a metric. */
export function metricsActive(): boolean {
  return currentInvocation() !== undefined;
}

/** One metric, one value. */
export function emitMetric(
  name: MetricName,
  value: number,
  dimensions: Partial<Record<Dimension, string>> = {},
  properties: Record<string, unknown> = {},
): void {
  emitMetrics({ [name]: value }, dimensions, properties);
}
