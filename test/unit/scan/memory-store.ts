import type { Envelope, ScanRequest } from '../../../lib/scan/contract';
import { JobState, ScanJob, summaryOf } from '../../../lib/scan/model';
import type { SettleState } from '../../../lib/scan/settle';
import type { ScanJobStore } from '../../../lib/scan/store';

/** An in-memory ScanJobStore for fast unit tests of the gateway's policy: same CAS and slot rules, no DynamoDB. */
export class MemoryScanJobStore implements ScanJobStore {
  readonly jobs = new Map<string, ScanJob>();
  inUse = 0;
  readonly counters = new Map<string, number>();

  async create(request: ScanRequest, requestHash: string, now: number, maxInflight: number) {
    const existing = this.jobs.get(request.job_id);
    if (existing) return { created: false, job: clone(existing) };
    const slot = this.inUse < maxInflight;
    if (slot) this.inUse++;
    const job: ScanJob = {
      job_id: request.job_id,
      request,
      request_hash: requestHash,
      state: slot ? 'starting' : 'queued',
      created_at: now,
      ...(slot ? { started_at: now } : {}),
      published: false,
      revision: 1,
    };
    this.jobs.set(job.job_id, clone(job));
    return { created: true, job };
  }
  async get(jobId: string) {
    const job = this.jobs.get(jobId);
    return job && clone(job);
  }
  async inState(state: JobState | 'unpublished', limit = 100) {
    const match = (j: ScanJob) =>
      state === 'unpublished' ? j.state === 'finished' && !j.published : j.state === state;
    return [...this.jobs.values()]
      .filter(match)
      .sort((a, b) => a.created_at - b.created_at)
      .slice(0, limit)
      .map(clone);
  }
  async countInState(state: JobState) {
    return (await this.inState(state, Infinity)).length;
  }
  async startSubmitted(job: ScanJob, now: number, maxInflight: number, inboxName: string, deadline: number) {
    if (job.state !== 'queued' || this.inUse >= maxInflight) return undefined;
    const next = this.cas(job, {
      ...job,
      state: 'submitted',
      started_at: now,
      submitted_at: now,
      inbox_name: inboxName,
      deadline,
    });
    if (next) this.inUse++;
    return next;
  }
  async submitted(job: ScanJob, inboxName: string, submittedAt: number, deadline: number) {
    return this.cas(job, { ...job, state: 'submitted', inbox_name: inboxName, submitted_at: submittedAt, deadline });
  }
  async recordPoll(job: ScanJob, patch: { settle?: SettleState; poll_ok?: true; poll_failed?: true }) {
    return this.cas(job, { ...job, ...patch });
  }
  async finish(job: ScanJob, result: Envelope, now: number) {
    const next = this.cas(job, {
      ...job,
      state: 'finished',
      result,
      finished_at: now,
      published: false,
      publish_lease: now + 30_000,
    });
    if (next && (job.state === 'starting' || job.state === 'submitted')) this.inUse--;
    return next;
  }
  async claimPublish(job: ScanJob, now: number) {
    const current = this.jobs.get(job.job_id);
    if (!current || current.state !== 'finished' || current.published || (current.publish_lease ?? 0) >= now)
      return false;
    current.publish_lease = now + 30_000;
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

  private cas(job: ScanJob, next: ScanJob): ScanJob | undefined {
    const current = this.jobs.get(job.job_id);
    if (!current || current.state !== job.state || current.revision !== job.revision) return undefined;
    const written = { ...next, revision: job.revision + 1 };
    this.jobs.set(job.job_id, clone(written));
    return written;
  }
}

const clone = <T>(v: T): T => structuredClone(v);
