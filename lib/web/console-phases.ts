import type { JobSummary } from '../scan/model';

/** Where a scan job is, as an operator names it (the console's phases; their words are in messages/console-*.ts). */
export const JOB_PHASES = [
  'queued',
  'starting',
  'in-input',
  'settling',
  'publishing',
  'done',
  'needs_check',
  'error',
] as const;
export type JobPhase = (typeof JOB_PHASES)[number];

export function jobPhase(j: Pick<JobSummary, 'state' | 'answered_at' | 'published' | 'status'>): JobPhase {
  switch (j.state) {
    case 'queued':
      return 'queued';
    case 'starting':
      return 'starting';
    case 'submitted':
      return j.answered_at === undefined ? 'in-input' : 'settling';
    default:
      if (!j.published) return 'publishing';
      return j.status === 'done' || j.status === 'needs_check' ? j.status : 'error';
  }
}
