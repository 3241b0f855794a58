import type { ScanInput } from './input';
import type { Envelope, ScanRequest } from './contract';
import type { JobState, JobSummary, ScanJob } from './model';
import type { PollPatch } from './model';

/** The S3 side of the gateway: the input file, and the raw answer saved before normalising. */
export interface ScanFiles {
  read(bucket: string, key: string): Promise<Buffer>;
  /** The object opened as a stream (at most MAX_INPUT_BYTES); whoever takes it reads it to the end or destroys it. */
  open(bucket: string, key: string): Promise<ScanInput>;
  writeRaw(key: string, body: string): Promise<void>;
}

/**
 * The durable job store of the gateway. Every transition is a CAS on the
 * job's state and revision; the in-flight counter (slots) moves in the SAME
 * write as the job that takes or gives back a slot, so no slot can leak and
 * two pollers racing on one job cannot both move it. A method that lost a
 * race answers `undefined`/`false`; it never throws for that.
 */
export interface ScanJobStore {
  /**
   * Dedup by job_id (replaces an in-process LRU): creates the job, already
   * `starting` with a slot when one is free under `maxInflight`, else `queued`.
   * A job that exists is returned as it is (`created: false`).
   */
  create(
    request: ScanRequest,
    requestHash: string,
    now: number,
    maxInflight: number,
  ): Promise<{ created: boolean; job: ScanJob }>;
  get(jobId: string): Promise<ScanJob | undefined>;
  /** Jobs in a state, oldest first, at most `limit`; each re-read and kept only if STILL in that state. */
  inState(state: JobState | 'unpublished', limit?: number): Promise<ScanJob[]>;
  /** The jobs created at or after `since`, newest first, at most `limit` (the console; eventually consistent). */
  recent(since: number, now: number, limit: number): Promise<JobSummary[]>;
  /** How many jobs wait in a state (a hint from the index, no re-read). */
  countInState(state: JobState, limit?: number): Promise<number>;
  /**
   * queued → submitted in ONE write that takes a slot (the poller's start, its input already read); undefined
   * when no slot is free or another poller moved the job. The file goes into Input/ right after.
   */
  startSubmitted(
    job: ScanJob,
    now: number,
    maxInflight: number,
    inboxName: string,
    deadline: number,
  ): Promise<ScanJob | undefined>;
  /** starting → submitted: the file is in Input/ since `submittedAt`. */
  submitted(job: ScanJob, inboxName: string, submittedAt: number, deadline: number): Promise<ScanJob | undefined>;
  /** Saves what a poll learned (the settle snapshot, that the hot folder answered); same state. */
  recordPoll(job: ScanJob, patch: PollPatch): Promise<ScanJob | undefined>;
  /** → finished with its envelope stored (before publishing), the slot released if held, the publish lease taken. */
  finish(job: ScanJob, result: Envelope, now: number): Promise<ScanJob | undefined>;
  /** Takes the right to (re-)publish a stored result whose lease ran out. */
  claimPublish(job: ScanJob, now: number): Promise<boolean>;
  markPublished(jobId: string, now: number): Promise<void>;
  slotsInUse(): Promise<number>;
  /** Operational counters (e.g. duplicate requests whose payload differs). */
  count(metric: string): Promise<void>;
  counter(metric: string): Promise<number>;
}
