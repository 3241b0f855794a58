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
