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
  published: boolean;
  /** Until when one poller holds the right to publish the stored result. */
  publish_lease?: number;
  revision: number;
}
