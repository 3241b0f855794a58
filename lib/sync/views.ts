import { isoTime } from '../clock';
import type { HourlyHead, StepRow } from './model';
import type { Operation } from './tbank/contract';

/** The read API's shapes: times as ISO strings, no fencing internals (run ids, revisions). */

const iso = (ms?: number) => (ms === undefined ? undefined : isoTime(ms));

export function hourlyView(head: HourlyHead) {
  return {
    state: head.state,
    meta: {
      attempt_id: head.attempt_id,
      started_at: iso(head.started_at),
      finished_at: iso(head.finished_at),
      error_code: head.error_code ?? null,
      sections: head.sections ?? null,
    },
  };
}

export function attemptView(attempt: HourlyHead & { rows: StepRow[] }) {
  return {
    attempt_id: attempt.attempt_id,
    user_id: attempt.user_id,
    state: attempt.state,
    started_at: iso(attempt.started_at),
    finished_at: iso(attempt.finished_at),
    error_code: attempt.error_code ?? null,
    sections: Object.entries(attempt.children).map(([section, stepId]) => {
      const row = attempt.rows.find((r) => r.section === section && r.step_id === stepId);
      return {
        section,
        step_id: stepId,
        step: row
          ? {
              state: row.state,
              error_code: row.error_code ?? null,
              tracking_id: row.tracking_id ?? null,
              started_at: iso(row.started_at),
              finished_at: iso(row.finished_at),
              unknown_values: row.unknown_values ?? 0,
              unknown_names: row.unknown_names ?? [],
              skipped_accounts: row.skipped_accounts ?? [],
            }
          : null,
      };
    }),
  };
}

/** Operations as stored: money as {currency, value: "<decimal string>"}, never a float. */
export function operationsView(operations: Operation[]) {
  return { items: operations };
}
