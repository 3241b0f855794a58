import { gcra, Pace, PaceStore, Taken } from '../../lib/sync/pacer';

/**
 * The pacing schedules in memory, with the DynamoDB store's semantics (lib/sync/dynamodb-pace.ts):
 * each take is one atomic step, and every operation first yields, so concurrent takers interleave.
 */
export class MemoryPaceStore implements PaceStore {
  readonly schedules = new Map<string, { tat: number; paused_until: number }>();
  private readonly yieldNow = () => new Promise<void>((resolve) => setImmediate(resolve));

  async takePace(key: string, now: number, pace: Pace, latest: number): Promise<Taken> {
    await this.yieldNow();
    const s = this.schedules.get(key);
    const next = gcra(s?.tat, now, pace);
    if (next.at > latest) return { busyUntil: next.at };
    this.schedules.set(key, { paused_until: 0, ...s, tat: next.tat });
    return { at: next.at };
  }

  async pausePace(key: string, until: number, pace: Pace): Promise<void> {
    await this.yieldNow();
    const s = this.schedules.get(key) ?? { tat: 0, paused_until: 0 };
    this.schedules.set(key, {
      tat: Math.max(s.tat, until + pace.burstMs),
      paused_until: Math.max(s.paused_until, until),
    });
  }

  async pacePausedUntil(key: string): Promise<number> {
    await this.yieldNow();
    return this.schedules.get(key)?.paused_until ?? 0;
  }

  async paceQueuedMs(key: string, now: number): Promise<number> {
    await this.yieldNow();
    return Math.max(0, (this.schedules.get(key)?.tat ?? 0) - now);
  }
}
