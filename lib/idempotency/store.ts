import type { HttpResult } from '../http/response';

/** A stored answer, replayed as is to a retry with the same key and payload: the HTTP result itself. */
export type StoredResponse = HttpResult;

export interface IdempotencyRecord {
  status: 'in_progress' | 'completed';
  payload_hash: string;
  /** Unique per attempt: only the attempt that took the record completes or releases it. */
  token: string;
  /** Epoch seconds: after it the record is dead (and DynamoDB's TTL removes it). */
  expires_at: number;
  /** Epoch ms: an in-progress record older than this was abandoned (the function died) and may be taken over. */
  in_progress_until: number;
  response?: StoredResponse;
}

export type Claim = { taken: true } | { taken: false; holder: IdempotencyRecord };

export interface IdempotencyStore {
  /** One conditional put: taken when absent, expired or abandoned; else the current holder (ALL_OLD, no second read). */
  claim(key: { PK: string; SK: string }, record: IdempotencyRecord, nowMs: number): Promise<Claim>;
  complete(key: { PK: string; SK: string }, token: string, response: StoredResponse): Promise<void>;
  /** Deletes the record if this attempt still holds it, so a retry runs again. */
  release(key: { PK: string; SK: string }, token: string): Promise<void>;
}
