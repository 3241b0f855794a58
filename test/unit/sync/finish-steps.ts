import type { Section } from '../../../lib/sync/model';
import type { HourlyService } from '../../../lib/sync/service';

/**
 * Finishes every dispatched step of the user's running attempt as the steps would, the second
 * phase too (a finish sends what waited for it); then settles unless `lost`.
 */
export async function finishSteps(
  s: { hourly: HourlyService; now: () => number },
  user: string,
  opts: { lost?: boolean } = {},
) {
  const { attempt_id } = (await s.hourly.head(user))!;
  const done = new Set<string>();
  for (let sent = true; sent;) {
    const head = (await s.hourly.head(user))!;
    for (const [section, stepId] of Object.entries(head.children)) {
      if (done.has(stepId)) continue;
      done.add(stepId);
      const row = { attempt_id, step_id: stepId, section: section as Section };
      await s.hourly.startStep(user, { ...row, state: 'running', started_at: s.now() });
      await s.hourly.finishStep(user, row, 'succeeded', s.now());
    }
    sent = (await s.hourly.dispatchReady(user, attempt_id, s.now(), async () => {})).length > 0;
  }
  return opts.lost ? undefined : s.hourly.settleHourly(user, attempt_id, s.now());
}
