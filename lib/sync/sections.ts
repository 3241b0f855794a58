import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { SyncDataStore } from './data-store';
import type { Section, SkippedAccount } from './model';
import type { TBankClient } from './tbank/client';
import type { Account, Operation } from './tbank/contract';
import { NoTimeLeftError } from './rate-budget';
import { PastBoundError } from './tbank/errors';
import { TBankError } from './tbank/errors';

/**
 * What each mandatory section reads from T-Bank and stores. Every item is
 * built from named, parsed fields (keys.ts); re-running a step replaces, never
 * duplicates.
 */

export interface SectionSettings {
  /** How far back the first sync of an account reads operations. */
  historyDays: number;
  /** Later syncs start at the last synced window's end minus this. */
  overlapMs: number;
  /**
   * GetInstrumentBy calls per step at most: a guard against a runaway list, not a quota. The
   * first sync must fill the catalog for every instrument found, so it is far above a real
   * portfolio's count; the rate budget paces the calls and the step's bound ends them.
   */
  catalogBatch: number;
  /** A catalog entry older than this is fetched again. */
  catalogStaleMs: number;
  /** Corporate events are read in [now - days, now + days]. */
  eventsWindowDays: number;
}

export const DEFAULT_SECTION_SETTINGS: SectionSettings = {
  historyDays: 3 * 365,
  overlapMs: 3 * 24 * 3600_000,
  catalogBatch: 2000,
  catalogStaleMs: 7 * 24 * 3600_000,
  eventsWindowDays: 365,
};

export interface SectionContext {
  api: TBankClient;
  data: SyncDataStore;
  user: string;
  attempt_id: string;
  now: Clock;
  log: Logger;
  settings: SectionSettings;
  /** The accounts this section skipped, and why: written on its step row. */
  skipped: SkippedAccount[];
  /** Present when the section may continue in a next step of the attempt (decision 326). */
  handover?: Handover;
}

/** Where a continuing section resumes, and when its step should hand over what is left. */
export interface Handover {
  /** Account id → the first month (YYYY-MM) not synced yet, as the step that handed over left it. */
  resume: Record<string, string>;
  /** True once the step should start no new work: it is near its bound. */
  due: () => boolean;
}

/** A section handing over: the rest of its work, for the continuation step (step.ts). */
export class SectionContinues extends Error {
  constructor(readonly resume: Record<string, string>) {
    super('the section continues in a next step');
    this.name = 'SectionContinues';
  }
}

export type SectionRunner = (ctx: SectionContext) => Promise<number>;

const DAY = 24 * 3600_000;
/** The most GetOperationsByCursor pages of one window: a cursor that never ends is a fault, not a loop. */
const MAX_PAGES = 1000;
export const OPERATIONS_PAGE_LIMIT = 1000;

/**
 * The account types whose brokerage methods (portfolio, operations) a token can
 * call. GetAccounts also lists debit, savings and invest-box accounts, and any
 * type a later release adds: those are skipped and listed, never called.
 */
export const BROKERAGE_ACCOUNT_TYPES: ReadonlySet<string> = new Set([
  'ACCOUNT_TYPE_UNSPECIFIED',
  'ACCOUNT_TYPE_TINKOFF',
  'ACCOUNT_TYPE_TINKOFF_IIS',
  'ACCOUNT_TYPE_INVEST_FUND',
]);

/** Skipped accounts listed on a step row at most (a token's owner has a handful). */
const MAX_SKIPPED = 50;

function skip(ctx: SectionContext, account_id: string, reason: SkippedAccount['reason'], trackingId?: string) {
  ctx.log.warn('sync_account_skipped', { account_id, reason, tracking_id: trackingId });
  if (ctx.skipped.length < MAX_SKIPPED && !ctx.skipped.some((s) => s.account_id === account_id))
    ctx.skipped.push({ account_id, reason });
}

/**
 * The accounts a section reads: open, brokerage, with access. A closed account
 * has nothing new (T-Bank refuses some reads on it); a NO_ACCESS or
 * non-brokerage one would only answer 40002 or 30xxx: skipped and listed.
 */
async function openAccounts(ctx: SectionContext): Promise<Account[]> {
  const accounts = await ctx.api.getAccounts();
  await ctx.data.putAccounts(ctx.user, accounts, ctx.now());
  return accounts.filter((a) => {
    if (a.status !== 'ACCOUNT_STATUS_OPEN') return false;
    if (a.access_level === 'ACCOUNT_ACCESS_LEVEL_NO_ACCESS') return (skip(ctx, a.id, 'no-access'), false);
    if (!BROKERAGE_ACCOUNT_TYPES.has(a.type)) return (skip(ctx, a.id, 'not-brokerage'), false);
    return true;
  });
}

/**
 * Runs `work` per account; 50004 (account not found) or 40002 (no rights on it: a
 * single-account token sees its owner's other accounts) skips that account only.
 * 40002 on every account the section tried is the token's own limit: INSUFFICIENT_RIGHTS.
 */
async function perAccount<T>(ctx: SectionContext, accounts: Account[], work: (a: Account) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  const refusals: TBankError[] = [];
  for (const account of accounts) {
    try {
      out.push(await work(account));
    } catch (err) {
      if (!(err instanceof TBankError && (err.kind === 'not-found' || err.kind === 'forbidden'))) throw err;
      if (err.kind === 'forbidden') refusals.push(err);
      skip(ctx, account.id, err.kind, err.trackingId);
    }
  }
  if (refusals.length > 0 && refusals.length === accounts.length) throw refusals[0];
  return out;
}

const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);
const monthStart = (ms: number) => Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth(), 1);
const nextMonth = (ms: number) => Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth() + 1, 1);

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/**
 * The month windows an account's sync covers, to now: from the month a continuation resumes at
 * (its predecessor synced every window before it), else from its history depth (first sync) or its
 * last window minus the overlap.
 */
export async function operationWindows(
  ctx: SectionContext,
  account: string,
  now: number,
): Promise<Array<{ month: string; from: number; to: number }>> {
  const resumeAt = MONTH.exec(ctx.handover?.resume[account] ?? '');
  const last = resumeAt ? undefined : await ctx.data.lastOperationWindow(ctx.user, account);
  const start = resumeAt
    ? Math.min(Date.UTC(Number(resumeAt[1]), Number(resumeAt[2]) - 1, 1), now)
    : last
      ? Math.min(last.synced_to - ctx.settings.overlapMs, now)
      : now - ctx.settings.historyDays * DAY;
  const windows = [];
  for (let m = monthStart(start); m <= now; m = nextMonth(m))
    windows.push({ month: monthOf(m), from: m, to: Math.min(nextMonth(m), now) });
  return windows;
}

const WINDOW_CONCURRENCY = 8;

/** Every page of one window, as T-Bank answered it. */
async function readWindow(
  ctx: SectionContext,
  accountId: string,
  w: { month: string; from: number; to: number },
): Promise<Operation[]> {
  const operations: Operation[] = [];
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page >= MAX_PAGES)
      throw new TBankError('bad-answer', `GetOperationsByCursor: more than ${MAX_PAGES} pages in ${w.month}`);
    const answer = await ctx.api.operationsPage({
      accountId,
      from: new Date(w.from).toISOString(),
      to: new Date(w.to).toISOString(),
      cursor,
      limit: OPERATIONS_PAGE_LIMIT,
    });
    operations.push(...answer.items);
    if (!answer.has_next) return operations;
    if (answer.next_cursor === cursor)
      throw new TBankError('bad-answer', 'GetOperationsByCursor: the cursor did not move');
    cursor = answer.next_cursor;
  }
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Runs `work` over items, at most `width` at once; the first failure rejects (the others finish their current item). */
async function pool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const item = items[next++];
      try {
        await work(item);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

export const SECTION_RUNNERS: Record<Section, SectionRunner> = {
  portfolio: async (ctx) => {
    const portfolios = await perAccount(ctx, await openAccounts(ctx), (a) => ctx.api.getPortfolio(a.id));
    for (const p of portfolios) await ctx.data.putPortfolio(ctx.user, p, ctx.now());
    await ctx.data.addSeenInstruments(ctx.user, [
      ...new Set(portfolios.flatMap((p) => p.positions.map((pos) => pos.instrument_uid))),
    ]);
    return portfolios.reduce((n, p) => n + p.positions.length, 0);
  },

  operations: async (ctx) => {
    let stored = 0;
    const seen = new Set<string>();
    // Where a continuation resumes: an account this step does not reach keeps the point it had.
    const resume = { ...ctx.handover?.resume };
    let handing = false;
    let refused: PastBoundError | NoTimeLeftError | undefined;
    let synced = 0;
    const handOver = () => (handing ||= !!ctx.handover?.due());
    await perAccount(ctx, await openAccounts(ctx), async (account) => {
      if (handOver()) return;
      const now = ctx.now();
      const windows = await operationWindows(ctx, account.id, now);
      const done = windows.map(() => false);
      // Read a few at once, written in month order: what is stored is always every window up to some
      // month, so a sync cut short (a handover, the step's bound, the attempt's) leaves no hole that a
      // later sync, starting at the newest stored window, would skip.
      const written = windows.map(() => deferred<boolean>());
      const syncWindow = async (i: number): Promise<boolean> => {
        if (handOver()) return false;
        const w = windows[i];
        let operations: Operation[];
        try {
          operations = await readWindow(ctx, account.id, w);
        } catch (err) {
          // No send instant (or no time) left before the step's bound: the window is the continuation's.
          if (!(ctx.handover && (err instanceof PastBoundError || err instanceof NoTimeLeftError))) throw err;
          refused = err;
          handing = true;
          return false;
        }
        if (i > 0 && !(await written[i - 1].promise)) return false; // an older window was not: nor is this one
        // An empty window never synced before has nothing to replace. The newest is always written: it
        // records how far the account is synced, so it is written LAST, once every older window is.
        const newest = i === windows.length - 1;
        if (operations.length || newest || (await ctx.data.hasOperationWindow(ctx.user, account.id, w.month)))
          await ctx.data.replaceOperationWindow({
            user: ctx.user,
            attempt_id: ctx.attempt_id,
            account: account.id,
            month: w.month,
            operations,
            synced_to: w.to,
          });
        for (const op of operations) if (op.instrument_uid) seen.add(op.instrument_uid);
        stored += operations.length;
        return true;
      };
      const sync = async (i: number) => {
        let ok = false;
        try {
          ok = await syncWindow(i);
        } finally {
          written[i].resolve(ok);
        }
        if (!ok) return;
        done[i] = true;
        synced++;
      };
      // A few windows at once: the shared budget paces the calls, the table takes the writes.
      const older = windows.slice(0, -1).map((_, i) => i);
      await pool(older, WINDOW_CONCURRENCY, sync);
      if (windows.length && done.slice(0, -1).every(Boolean)) await sync(windows.length - 1);
      // The continuation resumes at the first window not synced (a few later ones are read again).
      const first = done.indexOf(false);
      if (first === -1) delete resume[account.id];
      else resume[account.id] = windows[first].month;
    });
    await ctx.data.addSeenInstruments(ctx.user, [...seen]);
    // A step that synced nothing hands nothing over: the budget's refusal is its outcome, as without a handover.
    if (refused && synced === 0) throw refused;
    if (handing) throw new SectionContinues(resume);
    return stored;
  },

  'events.refresh': async (ctx) => {
    const portfolios = await perAccount(ctx, await openAccounts(ctx), (a) => ctx.api.getPortfolio(a.id));
    const held = new Map<string, string>();
    for (const p of portfolios) for (const pos of p.positions) held.set(pos.instrument_uid, pos.instrument_type);
    const now = ctx.now();
    const from = new Date(now - ctx.settings.eventsWindowDays * DAY).toISOString();
    const to = new Date(now + ctx.settings.eventsWindowDays * DAY).toISOString();
    let stored = 0;
    // GetDividends filters from/to by record date (instruments.proto, GetDividendsRequest): a dividend whose
    // register closed within the year before is kept even when it is paid later.
    for (const [uid, type] of [...held].sort()) {
      if (type !== 'share' && type !== 'etf' && type !== 'bond') continue;
      const events = await unlessUnknownInstrument(ctx, uid, async () => ({
        dividends: type === 'bond' ? [] : await ctx.api.getDividends(uid, from, to),
        bondEvents: type === 'bond' ? await ctx.api.getBondEvents(uid, from, to) : [],
      }));
      if (!events) continue;
      const { dividends, bondEvents } = events;
      await ctx.data.putEvents(ctx.user, uid, dividends, bondEvents, now);
      stored += dividends.length + bondEvents.length;
    }
    return stored;
  },

  'catalog.enrichment': async (ctx) => {
    const now = ctx.now();
    const wanted = [
      ...new Set([...(await ctx.data.seenInstruments(ctx.user)), ...(await ctx.data.heldInstruments(ctx.user))]),
    ].sort();
    const fetchedAt = await ctx.data.catalogFetchedAt(wanted);
    const due = wanted
      .filter((uid) => (fetchedAt.get(uid) ?? -Infinity) < now - ctx.settings.catalogStaleMs)
      .slice(0, ctx.settings.catalogBatch);
    let stored = 0;
    for (const uid of due) {
      const instrument = await unlessUnknownInstrument(ctx, uid, () =>
        ctx.api.getInstrumentBy('INSTRUMENT_ID_TYPE_UID', uid),
      );
      if (!instrument) continue;
      await ctx.data.putInstrument(instrument, now);
      stored++;
    }
    return stored;
  },
};

/** `read`'s answer, or undefined when T-Bank does not know the instrument (50002): that instrument is skipped, logged. */
async function unlessUnknownInstrument<T>(
  ctx: SectionContext,
  uid: string,
  read: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof TBankError && err.kind === 'not-found')) throw err;
    ctx.log.warn('sync_instrument_unknown', { instrument_uid: uid, tracking_id: err.trackingId });
    return undefined;
  }
}
