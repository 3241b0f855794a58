import { countByInvariant, Invariant, Violation } from './audit/violations';
import { backlogAfterFaults, FaultWindow, latencyByPath, PathLatency, Recorder, UserPath } from './metrics';

/** The soak's figures: printed at the end and written as JSON (--json). */
export interface SoakReport {
  started_at: string;
  minutes: number;
  seed: number;
  chaos: boolean;
  /** Wall time of the whole run: stack start, load, drain, audit. */
  duration_s: number;
  operations: Record<string, number>;
  operations_total: number;
  faults: Record<string, number>;
  /** recovery_ms: the fault's end to its recovery; scan_backlog_ms: the recovery to the last scan it held up. */
  windows: Array<FaultWindow & { recovery_ms?: number; scan_backlog_ms?: number }>;
  violations: Record<Invariant, number>;
  violations_total: number;
  /** The first violations in full (all are counted above). */
  violation_details: Violation[];
  latency_ms: Record<UserPath, PathLatency>;
  notes: string[];
}

export function buildReport(o: {
  startedAt: number;
  endedAt: number;
  minutes: number;
  seed: number;
  chaos: boolean;
  recorder: Recorder;
  windows: FaultWindow[];
  violations: Violation[];
  notes: string[];
}): SoakReport {
  const faults: Record<string, number> = {};
  for (const w of o.windows) faults[`${w.kind} ${w.target}`] = (faults[`${w.kind} ${w.target}`] ?? 0) + 1;
  const backlog = backlogAfterFaults(o.recorder.samples, o.windows, 'scan');
  return {
    started_at: new Date(o.startedAt).toISOString(),
    minutes: o.minutes,
    seed: o.seed,
    chaos: o.chaos,
    duration_s: Math.round((o.endedAt - o.startedAt) / 1000),
    operations: Object.fromEntries(Object.entries(o.recorder.ops).sort()),
    operations_total: o.recorder.total(),
    faults,
    windows: o.windows.map((w, i) => ({
      ...w,
      recovery_ms: w.recoveredAt === undefined ? undefined : w.recoveredAt - w.end,
      scan_backlog_ms: backlog[i],
    })),
    violations: countByInvariant(o.violations),
    violations_total: o.violations.length,
    violation_details: o.violations.slice(0, 100),
    latency_ms: latencyByPath(o.recorder.samples, o.windows),
    notes: o.notes,
  };
}

const ms = (v: number | undefined) => (v === undefined ? '-' : `${Math.round(v)}`);

export function formatReport(r: SoakReport): string {
  const lines = [
    `soak: ${r.minutes} min of load${r.chaos ? ' and faults' : ' (no chaos)'}, seed ${r.seed}, ${r.duration_s} s in all`,
    `operations: ${r.operations_total}`,
    ...Object.entries(r.operations).map(([k, n]) => `  ${k.padEnd(32)} ${n}`),
    `faults: ${r.windows.length}`,
    ...r.windows.map(
      (w) =>
        `  ${`${w.kind} ${w.target}`.padEnd(32)} ${((w.end - w.start) / 1000).toFixed(0).padStart(4)} s   recovered ${w.recovery_ms === undefined ? 'NEVER' : `in ${(w.recovery_ms / 1000).toFixed(1)} s`}${w.scan_backlog_ms === undefined ? '' : `, scans it held done ${(w.scan_backlog_ms / 1000).toFixed(1)} s later`}`,
    ),
    `violations: ${r.violations_total}`,
    ...Object.entries(r.violations).map(([k, n]) => `  ${k.padEnd(52)} ${n}`),
    ...r.violation_details.slice(0, 20).map((v) => `    ! ${v.invariant}: ${v.detail}`),
    'latency (ms)                         outside faults: n  p50  p99    inside faults: n  p50  p99',
    ...Object.entries(r.latency_ms).map(
      ([path, l]) =>
        `  ${path.padEnd(34)} ${String(l.outside.n).padStart(16)} ${ms(l.outside.p50).padStart(4)} ${ms(l.outside.p99).padStart(5)} ${String(l.inside.n).padStart(18)} ${ms(l.inside.p50).padStart(4)} ${ms(l.inside.p99).padStart(5)}`,
    ),
    ...r.notes.map((n) => `note: ${n}`),
  ];
  return lines.join('\n') + '\n';
}
