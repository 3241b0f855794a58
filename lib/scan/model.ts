import type { Envelope, ScanRequest } from './contract';
import type { SettleState } from './settle';

/**
 * A durable scan job: everything that must outlive one invocation (the
 * request, where it is in the pipeline, the settle snapshot, the stored
 * result) lives here, never in process memory.
 *
 * queued ──(slot)──▶ starting ──(file in Input/)──▶ submitted ──▶ finished
 *    │ └──(slot, input read: the poller's start)──────▲                ▲
 *    └──────────────────────────────┴────────────────────────────────┘
 */
export type JobState = 'queued' | 'starting' | 'submitted' | 'finished';

export interface ScanJob {
  job_id: string;
  request: ScanRequest;
  /** sha256 of the request's payload (file_id, bucket, key): tells a re-send from a conflicting reuse of the id. */
  request_hash: string;
  state: JobState;
  created_at: number;
  started_at?: number;
  /** When the file landed in Input/: the deadline clock starts here, not at the slot. */
  submitted_at?: number;
  deadline?: number;
  inbox_name?: string;
  settle?: SettleState;
  /** At least one poll of the hot folder answered (with or without files): tells TIMEOUT from "hot folder unavailable". */
  poll_ok?: boolean;
  /** At least one poll of the hot folder failed. */
  poll_failed?: boolean;
  /** Reads of the settled answer set begun and not ended by an outcome (MAX_ANSWER_READS, answers.ts). */
  answer_reads?: number;
  result?: Envelope;
  /** When the result was stored (settled, or ended by an error or the deadline). */
  finished_at?: number;
  published: boolean;
  /** When the envelope went out on NATS. */
  published_at?: number;
  /** Until when one poller holds the right to publish the stored result. */
  publish_lease?: number;
  revision: number;
}

// --- the transitions: the ONE place each move of a job is written ----------------------
// Pure: the DynamoDB store (dynamodb-store.ts) writes their result as a CAS on
// the state and revision read, the tests' memory store applies it in memory;
// both decide nothing else. Each returns the job as written (revision + 1).

/** How long a publisher holds a job's result before another may re-publish it. */
export const PUBLISH_LEASE_MS = 30_000;

/** A new job: `starting` when it took a slot in the same write, else `queued` (the poller starts it). */
export function newJob(request: ScanRequest, requestHash: string, now: number, withSlot: boolean): ScanJob {
  const queued: ScanJob = {
    job_id: request.job_id,
    request,
    request_hash: requestHash,
    state: 'queued',
    created_at: now,
    published: false,
    revision: 1,
  };
  return withSlot ? { ...queued, state: 'starting', started_at: now } : queued;
}

/**
 * queued → submitted in one move (the poller's start: its input already read,
 * the slot taken in the same write); undefined for any other state, since
 * only a queued job may take a slot.
 */
export function startSubmitted(job: ScanJob, now: number, inboxName: string, deadline: number): ScanJob | undefined {
  if (job.state !== 'queued') return undefined;
  return {
    ...job,
    state: 'submitted',
    started_at: now,
    submitted_at: now,
    inbox_name: inboxName,
    deadline,
    revision: job.revision + 1,
  };
}

/** starting → submitted: the file is in Input/ since `submittedAt`, the deadline counts from there. */
export function submitted(job: ScanJob, inboxName: string, submittedAt: number, deadline: number): ScanJob {
  return {
    ...job,
    state: 'submitted',
    inbox_name: inboxName,
    submitted_at: submittedAt,
    deadline,
    revision: job.revision + 1,
  };
}

export type PollPatch = { settle?: SettleState; poll_ok?: true; poll_failed?: true; answer_reads?: number };

/** What a poll learned (the settle snapshot, that the hot folder answered or failed); same state. */
export function polled(job: ScanJob, patch: PollPatch): ScanJob {
  return { ...job, ...patch, revision: job.revision + 1 };
}

/** → finished: the envelope stored before publishing, the publish lease taken by the finisher. */
export function finished(job: ScanJob, result: Envelope, now: number): ScanJob {
  return {
    ...job,
    state: 'finished',
    result,
    finished_at: now,
    published: false,
    publish_lease: now + PUBLISH_LEASE_MS,
    revision: job.revision + 1,
  };
}

/** A job in these states holds a slot: finishing it gives the slot back in the same write. */
export function holdsSlot(job: Pick<ScanJob, 'state'>): boolean {
  return job.state === 'starting' || job.state === 'submitted';
}

/** True when the job is (still) in `state`; `unpublished` = finished with its result not yet out. */
export function isInState(job: Pick<ScanJob, 'state' | 'published'>, state: JobState | 'unpublished'): boolean {
  return state === 'unpublished' ? job.state === 'finished' && !job.published : job.state === state;
}

/**
 * Whether a publisher may take the right to (re-)publish a finished job's
 * result: unpublished, its lease absent or over. The DynamoDB store spells the
 * same rule as its update's condition.
 */
export function mayClaimPublish(job: Pick<ScanJob, 'state' | 'published' | 'publish_lease'>, now: number): boolean {
  return job.state === 'finished' && !job.published && (job.publish_lease === undefined || job.publish_lease < now);
}

/** A job as the console lists it: the phase times and the envelope's outcome, read from RECENT. */
export interface JobSummary {
  job_id: string;
  file_id: string;
  attempt: number;
  state: JobState;
  created_at: number;
  submitted_at?: number;
  answered_at?: number;
  finished_at?: number;
  published_at?: number;
  published: boolean;
  status?: string;
  error_code?: string;
}

/** The summary of a job read whole; the RECENT index's items carry the envelope's outcome instead (keys.ts). */
export function summaryOf(
  job: Pick<
    ScanJob,
    | 'job_id'
    | 'request'
    | 'state'
    | 'created_at'
    | 'submitted_at'
    | 'settle'
    | 'finished_at'
    | 'published'
    | 'published_at'
    | 'result'
  >,
  outcome: { status?: string; error_code?: string } = {
    status: job.result?.status,
    error_code: job.result?.error?.code,
  },
): JobSummary {
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const request = (job.request ?? {}) as Partial<ScanJob['request']>;
  return {
    job_id: String(job.job_id),
    file_id: typeof request.file_id === 'string' ? request.file_id : '',
    attempt: num(request.attempt) ?? 0,
    state: job.state,
    created_at: num(job.created_at) ?? 0,
    submitted_at: num(job.submitted_at),
    answered_at: num(job.settle?.first_seen_at),
    finished_at: num(job.finished_at),
    published_at: num(job.published_at),
    published: job.published === true,
    status: typeof outcome.status === 'string' ? outcome.status : undefined,
    error_code: typeof outcome.error_code === 'string' ? outcome.error_code : undefined,
  };
}
