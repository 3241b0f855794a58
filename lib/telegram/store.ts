import type { EventKind } from './model';

/**
 * The exactly-once record of notifications (claim before send) and the
 * failure store. Every write is conditional on the claim's owner, so a worker
 * whose lease was taken over can never overwrite the new holder's outcome.
 */

export type DeliveryStatus = 'sending' | 'retrying' | 'sent' | 'failed' | 'uncertain';

export interface DeliveryRef {
  eventId: string;
  chatId: number;
  downloadId: string;
  kind: EventKind;
}

export type ClaimResult =
  | { claimed: true; attempts: number }
  /** Someone holds or settled it: `sent`/`failed`/`uncertain` are final; a live `sending`/`retrying` is another worker's. */
  | {
      claimed: false;
      status: DeliveryStatus;
      /** This call found the dead sender and recorded it `uncertain`. */ settledNow?: boolean;
    };

export interface Failure {
  id: string;
  event_id: string;
  chat_id: number;
  download_id: string;
  kind: string;
  reason: string;
  failed_at: string;
}

export interface DeliveryStore {
  /**
   * Claims a delivery for `owner` until `leaseUntil`: new, or `retrying` past its lease (its holder died
   * between attempts: nothing is in flight). A `sending` past its lease died mid-send: it becomes
   * `uncertain` (recorded in the failure store) and is never sent again.
   */
  claim(ref: DeliveryRef, owner: string, now: number, leaseUntil: number): Promise<ClaimResult>;
  /** Before each attempt: from here until markSent/markRetrying a crash leaves the outcome unknown. */
  markSending(ref: DeliveryRef, owner: string, leaseUntil: number): Promise<void>;
  /** The attempt got a definite refusal (or no answer): nothing was sent, another attempt may follow. */
  markRetrying(ref: DeliveryRef, owner: string, attempts: number, error: string, leaseUntil: number): Promise<void>;
  markSent(ref: DeliveryRef, owner: string, messageId: number): Promise<void>;
  /** Past its bound or refused for good: final, with a failure item. */
  markFailed(ref: DeliveryRef, owner: string, reason: string): Promise<void>;
  /** A record that is no notification at all (unreadable): a failure item only. */
  recordFailure(failure: Omit<Failure, 'id' | 'failed_at'>): Promise<void>;
  listFailures(limit: number): Promise<Failure[]>;
}

export class ClaimLostError extends Error {
  readonly code = 'CLAIM_LOST';
  constructor(ref: DeliveryRef) {
    super(`delivery ${ref.eventId}/${ref.chatId}: claim taken over`);
    this.name = 'ClaimLostError';
  }
}
