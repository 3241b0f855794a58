import { headFromItem, stepFromItem } from '../../../lib/sync/keys';
import { HOUR_MS, SyncErrorCode } from '../../../lib/sync/model';
import { deriveOutcome } from '../../../lib/sync/outcome';
import type { FaultWindow } from '../metrics';
import type { Connection } from '../load/sync';
import { violation, Violation } from './violations';

/**
 * The sync domain's audit, from the sync table's raw items and the stack's
 * log files: every attempt terminal, its outcome the one its step rows give,
 * no connection without an attempt for longer than an hour and the tick's
 * slack (plus any fault that overlapped the gap), and no brokerage token in
 * any log line.
 */

export interface SyncAuditInput {
  items: Record<string, unknown>[];
  connections: Connection[];
  /** When the load ended (gaps are measured up to here). */
  end: number;
  hourMs?: number;
  windows: FaultWindow[];
  /** The text of every log file of the stack, by name. */
  logs: Map<string, string>;
}

/** A tick a minute, one missed to a restart, and the first step's start: the slack of "on time". */
export const TICK_SLACK_MS = 3 * 60_000;

export function auditSync(input: SyncAuditInput): Violation[] {
  const out: Violation[] = [];
  const hourMs = input.hourMs ?? HOUR_MS;
  const attempts = input.items.filter((i) => i.entity === 'attempt' && i.SK === 'META').map(headFromItem);
  const rows = input.items.filter((i) => i.entity === 'step').map(stepFromItem);
  for (const head of attempts) {
    if (head.state === 'running') {
      out.push(
        violation('sync: every attempt terminal', `attempt ${head.attempt_id} of ${head.user_id} still running`),
      );
      continue;
    }
    const cause =
      head.error_code === SyncErrorCode.INTERRUPTED || head.error_code === SyncErrorCode.ACCESS_DENIED
        ? head.error_code
        : undefined;
    const mine = rows.filter((r) => r.attempt_id === head.attempt_id);
    const derived = deriveOutcome({ head, rows: mine, cause });
    if (derived.state !== head.state || (derived.error_code ?? null) !== (head.error_code ?? null))
      out.push(
        violation(
          'sync: outcome derived from its step rows',
          `attempt ${head.attempt_id}: recorded ${head.state}/${head.error_code ?? '-'}, its rows give ${derived.state}/${derived.error_code ?? '-'}`,
        ),
      );
  }

  const faultMs = (from: number, to: number) =>
    input.windows.reduce(
      (sum, w) => sum + Math.max(0, Math.min(to, w.recoveredAt ?? w.end) - Math.max(from, w.start)),
      0,
    );
  for (const c of input.connections) {
    const starts = attempts
      .filter((a) => a.user_id === c.user_id)
      .map((a) => a.started_at)
      .sort((a, b) => a - b);
    // Due at once when saved, then an hour after each start.
    const marks = [c.at - hourMs, ...starts];
    for (let i = 0; i < marks.length; i++) {
      const dueAt = marks[i] + hourMs;
      const next = starts[i] ?? input.end;
      const late = next - dueAt - faultMs(dueAt, next);
      if (late > TICK_SLACK_MS)
        out.push(
          violation(
            'sync: no hour skipped without a recorded reason',
            `${c.user_id}: due ${new Date(dueAt).toISOString()}, ${starts[i] === undefined ? 'no attempt' : 'next attempt'} ${Math.round(late / 1000)} s past the tick's slack`,
          ),
        );
    }
  }

  for (const c of input.connections)
    for (const [file, text] of input.logs)
      if (text.includes(c.token))
        out.push(violation('sync: no T-Bank token in any log', `${c.user_id}'s token in ${file}`));
  return out;
}
