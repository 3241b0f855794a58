import type { RateUse } from './model';
import type { PaceStore } from './pacer';
import type { Account, BondEvent, Dividend, Instrument, Operation, Portfolio } from './tbank/contract';

/**
 * Storage of the synced brokerage data (dynamodb-data-store.ts on DynamoDB).
 * Operations are stored by window, never by id (T-Bank's operation ids change
 * over time): a window's operations are one generation, replaced whole.
 */
export interface OperationWindow {
  account_id: string;
  /** YYYY-MM (UTC). */
  month: string;
  generation: string;
  /** Epoch ms: the end of what the window's current generation covers. */
  synced_to: number;
  count: number;
}

/** How much one purge may do: at most `maxItems` deletes; it stops at the first one past `deadline` (epoch ms by `now`). */
export interface PurgeBound {
  maxItems: number;
  deadline: number;
  now: () => number;
}

/** `deleted`: items found and deleted; `done`: nothing of the user's is left. */
export interface PurgeResult {
  deleted: number;
  done: boolean;
}

/** The synced data, and the call budgets' pacing schedules (pacer.ts). */
export interface SyncDataStore extends PaceStore {
  /** Deletes the user's synced data (dynamodb-purge.ts), within `bound`; again until `done`. */
  purgeUser(user: string, bound: PurgeBound): Promise<PurgeResult>;
  putAccounts(user: string, accounts: Account[], now: number): Promise<void>;
  putPortfolio(user: string, portfolio: Portfolio, now: number): Promise<void>;
  putEvents(
    user: string,
    instrument: string,
    dividends: Dividend[],
    bondEvents: BondEvent[],
    now: number,
  ): Promise<void>;
  hasOperationWindow(user: string, account: string, month: string): Promise<boolean>;
  /** The newest window synced for the account. */
  lastOperationWindow(user: string, account: string): Promise<OperationWindow | undefined>;
  /**
   * Replaces a window's operations: writes a new generation, flips the window's
   * pointer to it in ONE transaction fenced by the attempt (a stale step never
   * flips), then deletes the old generation. A crash before the flip leaves
   * the previous generation current and complete.
   */
  replaceOperationWindow(input: {
    user: string;
    attempt_id: string;
    account: string;
    month: string;
    operations: Operation[];
    synced_to: number;
  }): Promise<OperationWindow>;
  /** The current generations' operations with from <= date < to (ISO), oldest first. */
  operations(user: string, from: string, to: string): Promise<Operation[]>;
  addSeenInstruments(user: string, uids: string[]): Promise<void>;
  seenInstruments(user: string): Promise<string[]>;
  /** Instrument uids of the user's stored portfolios. */
  heldInstruments(user: string): Promise<string[]>;
  /** fetched_at of the catalog's instruments (absent: not in the catalog). */
  catalogFetchedAt(uids: string[]): Promise<Map<string, number>>;
  putInstrument(instrument: Instrument, now: number): Promise<void>;
  /** The budget's windows still kept (TTL), newest first: the console's view of the rate limits. */
  rateUse(user: string): Promise<RateUse[]>;
  /** Counts one call of the token's in this window, up to `limit` (false: spent); the console reads the counts. */
  takeRateSlot(user: string, service: string, windowStart: number, limit: number, expiresAt: number): Promise<boolean>;
}
