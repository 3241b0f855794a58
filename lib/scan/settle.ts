import type { AnswerFile } from './hotfolder';

/**
 * Readiness of an answer set: at least one `*.json`, and the set
 * of (name, size) unchanged for the settle window. Invocations are short, so
 * the last snapshot and when it was first seen live on the job item; this is
 * the pure step from one poll to the next.
 */

export interface SettleState {
  /** "name:size|name:size…", sorted. */
  snapshot: string;
  first_seen_at: number;
}

export type SettleResult = { ready: true } | { ready: false; state?: SettleState };

export function snapshotOf(files: Pick<AnswerFile, 'name' | 'size'>[]): string {
  return files
    .map((f) => `${f.name}:${f.size}`)
    .sort()
    .join('|');
}

export function settle(
  files: Pick<AnswerFile, 'name' | 'size'>[] | null,
  previous: SettleState | undefined,
  now: number,
  windowMs: number,
): SettleResult {
  if (!files || files.length === 0) return { ready: false };
  const snapshot = snapshotOf(files);
  if (!previous || previous.snapshot !== snapshot) return { ready: false, state: { snapshot, first_seen_at: now } };
  return now - previous.first_seen_at >= windowMs ? { ready: true } : { ready: false, state: previous };
}
