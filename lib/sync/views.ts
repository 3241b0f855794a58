import type { HourlyHead, StepRow } from './model';

/** The read API's shapes: times as ISO strings, no fencing internals (run ids, revisions). */

const iso = (ms?: number) => (ms === undefined ? undefined : new Date(ms).toISOString());

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
      return { section, step_id: stepId, step: row ? { state: row.state, error_code: row.error_code ?? null, started_at: iso(row.started_at), finished_at: iso(row.finished_at) } : null };
    }),
  };
}
