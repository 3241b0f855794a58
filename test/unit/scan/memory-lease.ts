import type { Lease, PollerLeaseStore, WakeRecord } from '../../../lib/scan/poller';

/** The poller's lease in memory: the same conditions as DynamoDbPollerLease; `beforeRelease` runs inside a release, before its condition. */
export class MemoryPollerLease implements PollerLeaseStore {
  lease?: Lease;
  demandAt?: number;
  wake?: WakeRecord;
  beforeRelease?: () => Promise<void>;

  async demand(candidate: Lease, now: number) {
    this.lease ??= { ...candidate };
    this.demandAt = now;
    return { ...this.lease };
  }
  async acquire(candidate: Lease, now: number) {
    if (this.lease && this.lease.expires_at >= now) return false;
    this.lease = { ...candidate };
    return true;
  }
  async confirm(holder: string, expiresAt: number) {
    if (this.lease?.holder !== holder) return false;
    this.lease.expires_at = expiresAt;
    return true;
  }
  async handOver(from: string, to: Lease) {
    if (this.lease?.holder !== from) return false;
    this.lease = { ...to };
    return true;
  }
  async release(holder: string, quietSince: number) {
    const hook = this.beforeRelease;
    this.beforeRelease = undefined;
    await hook?.();
    if (this.lease?.holder !== holder) return false;
    if (this.demandAt !== undefined && this.demandAt >= quietSince) return false;
    this.lease = undefined;
    return true;
  }
  async recordWake(holder: string, wake: WakeRecord) {
    if (this.lease?.holder !== holder) return false;
    this.wake = { ...wake };
    return true;
  }
  async read() {
    return { lease: this.lease && { ...this.lease }, demand_at: this.demandAt, wake: this.wake && { ...this.wake } };
  }
}
