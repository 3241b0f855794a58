import { FieldSpec, pickFields, readItem } from '../util/item';
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
/** The files bucket's key of a job's raw answer (the merged answer set, saved before normalising); IAM allows `raw/*` only. */
export const rawAnswerKey = (jobId: string) => `raw/${jobId}.json`;
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

/** The fields of a job: what its item is written from and read back through (model.ts says what each means). */
const JOB_FIELDS: FieldSpec<ScanJob> = {
  job_id: 'string',
  request: 'object',
  request_hash: 'string',
  state: 'string',
  created_at: 'number',
  published: 'boolean',
  revision: 'number',
  started_at: 'number?',
  submitted_at: 'number?',
  deadline: 'number?',
  inbox_name: 'string?',
  settle: 'object?',
  poll_ok: 'boolean?',
  poll_failed: 'boolean?',
  answer_reads: 'number?',
  result: 'object?',
  finished_at: 'number?',
  published_at: 'number?',
  publish_lease: 'number?',
};

/** The item of a job: its named fields first, the keys last (data never chooses a key). */
export function toItem(job: ScanJob): Record<string, unknown> {
  const indexed = indexedAs(job);
  return {
    ...pickFields(JOB_FIELDS, job),
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

/** A job read back: its named fields only (keys, index keys, the TTL and the copied outcome stay behind). */
export function fromItem(item: Record<string, unknown>): ScanJob {
  return readItem(JOB_FIELDS, item, 'scan-job');
}

/** What RECENT projects of a job, as the console reads it: every field optional, `summaryOf` checks each. */
type RecentFields = Pick<ScanJob, (typeof RECENT_ATTRIBUTES)[number] & keyof ScanJob> & {
  status?: string;
  error_code?: string;
};
const RECENT_FIELDS: FieldSpec<RecentFields> = {
  job_id: 'any?',
  request: 'any?',
  state: 'any?',
  created_at: 'any?',
  started_at: 'any?',
  submitted_at: 'any?',
  settle: 'any?',
  finished_at: 'any?',
  published: 'any?',
  published_at: 'any?',
  deadline: 'any?',
  status: 'any?',
  error_code: 'any?',
};

/** A RECENT index item as the console lists it (the envelope itself is not projected: its outcome is). */
export function summaryFromItem(item: Record<string, unknown>): JobSummary {
  const recent = readItem(RECENT_FIELDS, item, 'scan-job (RECENT)');
  return summaryOf(recent, { status: recent.status, error_code: recent.error_code });
}
