import type { RateUse } from '../../lib/sync/model';
import type { PaceStore } from '../../lib/sync/pacer';
import { MemoryPaceStore } from './memory-pace-store';
import type { OperationWindow, SyncDataStore } from '../../lib/sync/data-store';
import type { Account, Instrument, Operation, Portfolio } from '../../lib/sync/tbank/contract';

/**
 * The synced data in process memory: a test double (unit tests, the egress
 * bench) and the store of `npm run tbank:check`'s dry run (the steps' own
 * code path, nothing stored). Never the service's: its budget and windows
 * must outlive an invocation, which is why it lives outside lib/
 * (docs/decisions.md, 203).
 */
export class MemorySyncDataStore implements SyncDataStore {
  readonly accounts = new Map<string, Account>();
  readonly portfolios = new Map<string, Portfolio>();
  readonly events = new Map<string, { dividends: number; bond_events: number }>();
  readonly windows = new Map<string, OperationWindow & { operations: Operation[] }>();
  readonly seen = new Set<string>();
  readonly catalog = new Map<string, { instrument: Instrument; fetched_at: number }>();
  private readonly slots = new Map<string, number>();
  /** The pacing schedules; shared by the stores given the same one (steps of one bench share an address). */
  constructor(readonly pace: MemoryPaceStore = new MemoryPaceStore()) {}

  takePace: PaceStore['takePace'] = (key, now, pace, latest) => this.pace.takePace(key, now, pace, latest);
  pausePace: PaceStore['pausePace'] = (key, until, pace) => this.pace.pausePace(key, until, pace);
  pacePausedUntil: PaceStore['pacePausedUntil'] = (key) => this.pace.pacePausedUntil(key);
  paceQueuedMs: PaceStore['paceQueuedMs'] = (key, now) => this.pace.paceQueuedMs(key, now);

  /** One user's store: everything it holds but the catalog (shared) goes. */
  async purgeUser() {
    const deleted = this.accounts.size + this.portfolios.size + this.events.size + this.windows.size + this.seen.size;
    for (const held of [this.accounts, this.portfolios, this.events, this.windows, this.seen]) held.clear();
    return { deleted, done: true };
  }
  async putAccounts(_user: string, accounts: Account[]) {
    for (const a of accounts) this.accounts.set(a.id, a);
  }
  async putPortfolio(_user: string, p: Portfolio) {
    this.portfolios.set(p.account_id, p);
  }
  async putEvents(_user: string, instrument: string, dividends: unknown[], bondEvents: unknown[]) {
    this.events.set(instrument, { dividends: dividends.length, bond_events: bondEvents.length });
  }
  async hasOperationWindow(_user: string, account: string, month: string) {
    return this.windows.has(`${account}#${month}`);
  }
  async lastOperationWindow(_user: string, account: string) {
    return [...this.windows.values()]
      .filter((w) => w.account_id === account)
      .sort((a, b) => (a.month < b.month ? 1 : -1))[0];
  }
  async replaceOperationWindow(input: Parameters<SyncDataStore['replaceOperationWindow']>[0]) {
    const window = {
      account_id: input.account,
      month: input.month,
      generation: String(Date.now()),
      synced_to: input.synced_to,
      count: input.operations.length,
    };
    this.windows.set(`${input.account}#${input.month}`, { ...window, operations: input.operations });
    return window;
  }
  async operations(_user: string, from: string, to: string) {
    return [...this.windows.values()].flatMap((w) => w.operations).filter((o) => o.date >= from && o.date < to);
  }
  async addSeenInstruments(_user: string, uids: string[]) {
    for (const uid of uids) this.seen.add(uid);
  }
  async seenInstruments() {
    return [...this.seen];
  }
  async heldInstruments() {
    return [...new Set([...this.portfolios.values()].flatMap((p) => p.positions.map((x) => x.instrument_uid)))];
  }
  async catalogFetchedAt(uids: string[]) {
    return new Map(uids.filter((u) => this.catalog.has(u)).map((u) => [u, this.catalog.get(u)!.fetched_at]));
  }
  async putInstrument(instrument: Instrument, now: number) {
    this.catalog.set(instrument.uid, { instrument, fetched_at: now });
  }
  async rateUse(user: string): Promise<RateUse[]> {
    return [...this.slots]
      .map(([key, calls]) => [key.split('|'), calls] as const)
      .filter(([[u]]) => u === user)
      .map(([[, service, start], calls]) => ({ service, window_start: Number(start), calls }))
      .sort((a, b) => b.window_start - a.window_start || a.service.localeCompare(b.service));
  }
  async takeRateSlot(user: string, service: string, windowStart: number, limit: number) {
    const key = `${user}|${service}|${windowStart}`;
    const used = this.slots.get(key) ?? 0;
    if (used >= limit) return false;
    this.slots.set(key, used + 1);
    return true;
  }
}
