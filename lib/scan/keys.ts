import { JobSummary, ScanJob, summaryOf } from './model';

/**
 * Key design of the scan table (one place; the only module that writes a key prefix).
 *
 * item      PK              SK                 GSI1 (KEYS_ONLY)                                                   RECENT (INCLUDE)
 * job       JOB#<job_id>    META               STATE#<queued|starting|submitted|unpublished> / <created_at>#<job_id>   DAY#<YYYY-MM-DD> / <created_at>#<job_id>
 * slots     SLOTS           GLOBAL             -
 * counter   METRIC          <name>             -
 * poller    POLLER          LEASE              -         (the poller's lease and the last request's time: poller.ts)
 *
 * Access patterns: dedup a request (conditional put of the job); the jobs in
 * a state, oldest first (GSI1; a finished and published job leaves the index);
 * the in-flight counter (one item, conditional ADD); operational counters
 * (one item each, ADD); the operator console's jobs of the last hours, newest
 * first (RECENT, by the UTC day of creation: two queries cover 24 h; it
 * projects the phase times and the envelope's `status` and `error_code`, copied
 * to the item's top level, never the documents).
 */
export const jobKey = (jobId: string) => ({ PK: `JOB#${jobId}`, SK: 'META' });
export const SLOTS_KEY = { PK: 'SLOTS', SK: 'GLOBAL' };
export const POLLER_KEY = { PK: 'POLLER', SK: 'LEASE' };
export const metricKey = (name: string) => ({ PK: 'METRIC', SK: name });
export const STATE_INDEX = 'GSI1';
export const statePartition = (state: string) => `STATE#${state}`;
export const stateIndexKeys = (state: string, createdAt: number, jobId: string) => ({
  GSI1PK: statePartition(state),
  GSI1SK: createdSortKey(createdAt, jobId),
});
export const jobIdOfKey = (pk: string) => pk.slice('JOB#'.length);
export const RECENT_INDEX = 'RECENT';
export const dayPartition = (epochMs: number) => `DAY#${new Date(epochMs).toISOString().slice(0, 10)}`;
/** The time part of both indexes' sort key: creation time, ms, 15 digits (so it sorts as text). */
export const createdSortTime = (createdAt: number) => String(createdAt).padStart(15, '0');
/** The sort key of both indexes: creation time then the job id. */
export const createdSortKey = (createdAt: number, jobId: string) => `${createdSortTime(createdAt)}#${jobId}`;
/** The attributes RECENT projects (besides the keys). */
export const RECENT_ATTRIBUTES = [
  'job_id',
  'request',
  'state',
  'created_at',
  'started_at',
  'submitted_at',
  'settle',
  'finished_at',
  'published',
  'published_at',
  'deadline',
  'status',
  'error_code',
] as const;

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
    ...(job.finished_at !== undefined ? { finished_at: job.finished_at } : {}),
    ...(job.published_at !== undefined ? { published_at: job.published_at } : {}),
    ...(job.publish_lease !== undefined ? { publish_lease: job.publish_lease } : {}),
  };
  const indexed = indexedAs(job);
  return {
    ...fields,
    // The envelope's outcome at the top level, for the RECENT index (the envelope itself is not projected).
    ...(job.result
      ? { status: job.result.status, ...(job.result.error ? { error_code: job.result.error.code } : {}) }
      : {}),
    entity: 'scan-job',
    ...(indexed ? stateIndexKeys(indexed, job.created_at, job.job_id) : {}),
    GSI2PK: dayPartition(job.created_at),
    GSI2SK: createdSortKey(job.created_at, job.job_id),
    ...jobKey(job.job_id),
  };
}

export function fromItem(item: Record<string, unknown>): ScanJob {
  const {
    PK: _pk,
    SK: _sk,
    GSI1PK: _g1,
    GSI1SK: _g2,
    GSI2PK: _g3,
    GSI2SK: _g4,
    entity: _e,
    expires_at: _x,
    status: _s,
    error_code: _c,
    ...job
  } = item;
  return job as unknown as ScanJob;
}

/** A RECENT index item as the console lists it (the envelope itself is not projected: its outcome is). */
export function summaryFromItem(item: Record<string, unknown>): JobSummary {
  return summaryOf(item as unknown as ScanJob, {
    status: item.status as string | undefined,
    error_code: item.error_code as string | undefined,
  });
}
