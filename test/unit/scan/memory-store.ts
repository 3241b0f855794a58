import type { Envelope, ScanRequest } from '../../../lib/scan/contract';
import {
  finished,
  holdsSlot,
  isInState,
  JobState,
  mayClaimPublish,
  newJob,
  polled,
  PUBLISH_LEASE_MS,
  ScanJob,
  startSubmitted,
  submitted,
  summaryOf,
} from '../../../lib/scan/model';
import type { PollPatch } from '../../../lib/scan/model';
import type { ScanJobStore } from '../../../lib/scan/store';

/**
 * An in-memory ScanJobStore for fast unit tests of the gateway's policy: the
 * same transitions (lib/scan/model.ts), applied as a CAS on the state and
 * revision read, with the same slot rules; no DynamoDB.
 */
export class MemoryScanJobStore implements ScanJobStore {
  readonly jobs = new Map<string, ScanJob>();
  inUse = 0;
  readonly counters = new Map<string, number>();

  async create(request: ScanRequest, requestHash: string, now: number, maxInflight: number) {
    const existing = this.jobs.get(request.job_id);
    if (existing) return { created: false, job: clone(existing) };
    const slot = this.inUse < maxInflight;
    if (slot) this.inUse++;
    const job = newJob(request, requestHash, now, slot);
    this.jobs.set(job.job_id, clone(job));
    return { created: true, job };
  }
  async get(jobId: string) {
    const job = this.jobs.get(jobId);
    return job && clone(job);
  }
  async inState(state: JobState | 'unpublished', limit = 100) {
    return [...this.jobs.values()]
      .filter((j) => isInState(j, state))
      .sort((a, b) => a.created_at - b.created_at)
      .slice(0, limit)
      .map(clone);
  }
  async countInState(state: JobState) {
    return (await this.inState(state, Infinity)).length;
  }
  async startSubmitted(job: ScanJob, now: number, maxInflight: number, inboxName: string, deadline: number) {
    const next = startSubmitted(job, now, inboxName, deadline);
    if (!next || this.inUse >= maxInflight) return undefined;
    const written = this.cas(job, next);
    if (written) this.inUse++;
    return written;
  }
  async submitted(job: ScanJob, inboxName: string, submittedAt: number, deadline: number) {
    return this.cas(job, submitted(job, inboxName, submittedAt, deadline));
  }
  async recordPoll(job: ScanJob, patch: PollPatch) {
    return this.cas(job, polled(job, patch));
  }
  async finish(job: ScanJob, result: Envelope, now: number) {
    const written = this.cas(job, finished(job, result, now));
    if (written && holdsSlot(job)) this.inUse--;
    return written;
  }
  async claimPublish(job: ScanJob, now: number) {
    const current = this.jobs.get(job.job_id);
    if (!current || !mayClaimPublish(current, now)) return false;
    current.publish_lease = now + PUBLISH_LEASE_MS;
    return true;
  }
  async markPublished(jobId: string, now: number) {
    Object.assign(this.jobs.get(jobId)!, { published: true, published_at: now });
  }
  async recent(since: number, _now: number, limit: number) {
    return [...this.jobs.values()]
      .filter((j) => j.created_at >= since)
      .sort((a, b) => b.created_at - a.created_at)
      .slice(0, limit)
      .map((j) => summaryOf(j));
  }
  async slotsInUse() {
    return this.inUse;
  }
  async count(metric: string) {
    this.counters.set(metric, (this.counters.get(metric) ?? 0) + 1);
  }
  async counter(metric: string) {
    return this.counters.get(metric) ?? 0;
  }

  /** `next` (a model transition of `job`) stored if nobody moved the job since it was read. */
  private cas(job: ScanJob, next: ScanJob): ScanJob | undefined {
    const current = this.jobs.get(job.job_id);
    if (!current || current.state !== job.state || current.revision !== job.revision) return undefined;
    this.jobs.set(job.job_id, clone(next));
    return next;
  }
}

const clone = <T>(v: T): T => structuredClone(v);
