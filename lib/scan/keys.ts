import type { ScanJob } from './model';

/**
 * Key design of the scan table (one place; the only module that writes a key prefix).
 *
 * item      PK              SK                 GSI1 (KEYS_ONLY)
 * job       JOB#<job_id>    META               STATE#<queued|starting|submitted|unpublished> / <created_at>#<job_id>
 * slots     SLOTS           GLOBAL             -
 * counter   METRIC          <name>             -
 *
 * Access patterns: dedup a request (conditional put of the job); the jobs in
 * a state, oldest first (GSI1; a finished and published job leaves the index);
 * the in-flight counter (one item, conditional ADD); operational counters
 * (one item each, ADD).
 */
export const jobKey = (jobId: string) => ({ PK: `JOB#${jobId}`, SK: 'META' });
export const SLOTS_KEY = { PK: 'SLOTS', SK: 'GLOBAL' };
export const metricKey = (name: string) => ({ PK: 'METRIC', SK: name });
export const STATE_INDEX = 'GSI1';
export const statePartition = (state: string) => `STATE#${state}`;
export const stateIndexKeys = (state: string, createdAt: number, jobId: string) => ({
  GSI1PK: statePartition(state),
  GSI1SK: `${String(createdAt).padStart(15, '0')}#${jobId}`,
});
export const jobIdOfKey = (pk: string) => pk.slice('JOB#'.length);

/** Where the job sits in the state index: its state, `unpublished` for a stored result not yet out, nowhere once published. */
function indexedAs(job: ScanJob): string | undefined {
  if (job.state !== 'finished') return job.state;
  return job.published ? undefined : 'unpublished';
}

/** The item of a job: its named fields first, the keys last (data never chooses a key). */
export function toItem(job: ScanJob): Record<string, unknown> {
  const fields: ScanJob = {
    job_id: job.job_id,
    request: job.request,
    request_hash: job.request_hash,
    state: job.state,
    created_at: job.created_at,
    published: job.published,
    revision: job.revision,
    ...(job.started_at !== undefined ? { started_at: job.started_at } : {}),
    ...(job.submitted_at !== undefined ? { submitted_at: job.submitted_at } : {}),
    ...(job.deadline !== undefined ? { deadline: job.deadline } : {}),
    ...(job.inbox_name !== undefined ? { inbox_name: job.inbox_name } : {}),
    ...(job.settle !== undefined ? { settle: job.settle } : {}),
    ...(job.poll_ok !== undefined ? { poll_ok: job.poll_ok } : {}),
    ...(job.poll_failed !== undefined ? { poll_failed: job.poll_failed } : {}),
    ...(job.result !== undefined ? { result: job.result } : {}),
    ...(job.publish_lease !== undefined ? { publish_lease: job.publish_lease } : {}),
  };
  const indexed = indexedAs(job);
  return {
    ...fields,
    entity: 'scan-job',
    ...(indexed ? stateIndexKeys(indexed, job.created_at, job.job_id) : {}),
    ...jobKey(job.job_id),
  };
}

export function fromItem(item: Record<string, unknown>): ScanJob {
  const { PK: _pk, SK: _sk, GSI1PK: _g1, GSI1SK: _g2, entity: _e, expires_at: _x, ...job } = item;
  return job as unknown as ScanJob;
}
