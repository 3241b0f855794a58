/** Every invariant the soak audits (the report lists each, with its count: the goal is 0 for all). */
export const INVARIANTS = [
  'scan: exactly one final envelope per request',
  'scan: no job left non-terminal',
  'scan: raw answer in S3 matches its job',
  'downloads: at most one active download per infohash',
  'downloads: the guard names the active download',
  'downloads: every create answered 2xx is readable',
  'downloads: client and store agree after the drain',
  'downloads: no torrent outside the category touched',
  'sync: every attempt terminal',
  'sync: outcome derived from its step rows',
  'sync: no hour skipped without a recorded reason',
  'sync: no T-Bank token in any log',
  'telegram: every notification delivered once',
  'telegram: no notification sent twice',
  'telegram: every button press acted on once',
  'stack: no process crashed',
  'stack: no unhandled rejection in the logs',
  'stack: 5xx only inside fault windows',
  'audit: every source read',
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  invariant: Invariant;
  detail: string;
}

export const violation = (invariant: Invariant, detail: string): Violation => ({ invariant, detail });

export function countByInvariant(violations: readonly Violation[]): Record<Invariant, number> {
  const counts = Object.fromEntries(INVARIANTS.map((i) => [i, 0])) as Record<Invariant, number>;
  for (const v of violations) counts[v.invariant]++;
  return counts;
}
