import type { Claim, IdempotencyRecord, IdempotencyStore, StoredResponse } from '../../../lib/idempotency/store';

/** The policy over an in-memory store with the DynamoDB store's conditions (the store itself runs on the stack). */
export class MemoryStore implements IdempotencyStore {
  readonly items = new Map<string, IdempotencyRecord>();
  failComplete = false;
  async claim(key: { PK: string }, record: IdempotencyRecord, nowMs: number): Promise<Claim> {
    const old = this.items.get(key.PK);
    if (
      !old ||
      old.expires_at < Math.floor(nowMs / 1000) ||
      (old.status === 'in_progress' && old.in_progress_until < nowMs)
    ) {
      this.items.set(key.PK, record);
      return { taken: true };
    }
    return { taken: false, holder: old };
  }
  async complete(key: { PK: string }, token: string, response: StoredResponse) {
    if (this.failComplete) throw new Error('storage down');
    const old = this.items.get(key.PK);
    if (old?.token !== token) throw new Error('not ours');
    this.items.set(key.PK, { ...old, status: 'completed', response });
  }
  async release(key: { PK: string }, token: string) {
    if (this.items.get(key.PK)?.token === token) this.items.delete(key.PK);
  }
}
