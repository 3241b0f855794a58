/**
 * What the soak counts while it runs: operations per kind, latency samples
 * per user path (with when they started, to split inside / outside fault
 * windows), and every 5xx seen with its time. The audit never reads these
 * for its verdicts (it reads the stores, NATS and the client); they feed the
 * figures and the "5xx only inside fault windows" check.
 */

export const USER_PATHS = ['scan', 'download create', 'page render', 'button answer'] as const;
export type UserPath = (typeof USER_PATHS)[number];

export interface Sample {
  path: UserPath;
  at: number;
  ms: number;
}

export interface ServerError {
  at: number;
  what: string;
  status: number;
}

export interface FaultWindow {
  kind: string;
  target: string;
  start: number;
  end: number;
  /** When the service answered its probes again after the fault ended (undefined: it never did). */
  recoveredAt?: number;
}

export class Recorder {
  readonly ops: Record<string, number> = {};
  readonly samples: Sample[] = [];
  readonly serverErrors: ServerError[] = [];

  count(kind: string, n = 1): void {
    this.ops[kind] = (this.ops[kind] ?? 0) + n;
  }

  sample(path: UserPath, at: number, ms: number): void {
    this.samples.push({ path, at, ms });
  }

  serverError(what: string, status: number, at: number): void {
    this.serverErrors.push({ what, status, at });
  }

  total(): number {
    return Object.values(this.ops).reduce((a, b) => a + b, 0);
  }
}

/** The p-th percentile (nearest rank) of the values; undefined for none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (!values.length) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** A time is inside a fault when it falls in [start, recoveredAt ?? end + grace]: recovery belongs to the fault. */
export function insideFault(at: number, windows: readonly FaultWindow[], graceMs = 0): boolean {
  return windows.some((w) => at >= w.start && at <= Math.max(w.end + graceMs, w.recoveredAt ?? 0));
}

/**
 * Whether a request's life [at, at + ms] met a fault: it started or ended inside a window (until its recovery),
 * or spanned one. A request that started a moment before a fault and waited it out is the fault's figure, not the
 * steady state's; one sent after the recovery that still waits behind the fault's backlog stays "outside", so a
 * slow drain shows in the outside figures.
 */
export function metFault(sample: Pick<Sample, 'at' | 'ms'>, windows: readonly FaultWindow[]): boolean {
  const end = sample.at + sample.ms;
  return windows.some((w) => sample.at <= Math.max(w.end, w.recoveredAt ?? 0) && end >= w.start);
}

export interface PathLatency {
  outside: { n: number; p50?: number; p99?: number };
  inside: { n: number; p50?: number; p99?: number };
}

export function latencyByPath(
  samples: readonly Sample[],
  windows: readonly FaultWindow[],
): Record<UserPath, PathLatency> {
  const summary = (ms: number[]) => ({ n: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99) });
  return Object.fromEntries(
    USER_PATHS.map((path) => {
      const mine = samples.filter((s) => s.path === path);
      const inside = mine.filter((s) => metFault(s, windows));
      const outside = mine.filter((s) => !metFault(s, windows));
      return [path, { outside: summary(outside.map((s) => s.ms)), inside: summary(inside.map((s) => s.ms)) }];
    }),
  ) as Record<UserPath, PathLatency>;
}

/**
 * How long after each fault's recovery its backlog took to clear, for one user path: from the recovery to the
 * end of the last request sent before it (those the fault held up), 0 when none was still waiting. A window
 * that never recovered has no figure.
 */
export function backlogAfterFaults(
  samples: readonly Sample[],
  windows: readonly FaultWindow[],
  path: UserPath,
): Array<number | undefined> {
  return windows.map((w) => {
    if (w.recoveredAt === undefined) return undefined;
    const recovered = w.recoveredAt;
    const held = samples.filter((s) => s.path === path && s.at < recovered && s.at + s.ms > recovered);
    return held.reduce((most, s) => Math.max(most, s.at + s.ms - recovered), 0);
  });
}
