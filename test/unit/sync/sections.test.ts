import { silentLogger } from '../../../lib/log';
import { MemorySyncDataStore } from '../../support/memory-sync-data-store';
import { PastBoundError } from '../../../lib/sync/tbank/errors';
import {
  DEFAULT_SECTION_SETTINGS,
  SECTION_RUNNERS,
  SectionContext,
  SectionContinues,
} from '../../../lib/sync/sections';
import type { TBankClient } from '../../../lib/sync/tbank/client';
import type { Account, Operation } from '../../../lib/sync/tbank/contract';
import { TBankError } from '../../../lib/sync/tbank/errors';

/** The sections' policy with in-memory fakes: which windows are read and written, which accounts are skipped. */
const account = (id: string, status = 'ACCOUNT_STATUS_OPEN'): Account => ({
  id,
  type: 'ACCOUNT_TYPE_TINKOFF',
  name: id,
  status,
  access_level: 'ACCOUNT_ACCESS_LEVEL_READ_ONLY',
});
const op = (id: string, date: string, accountId = 'a1'): Operation => ({
  id,
  account_id: accountId,
  date,
  type: 'OPERATION_TYPE_BUY',
  state: 'OPERATION_STATE_EXECUTED',
});

function fakeApi(accounts: Account[], ops: Operation[], missing: string[] = []) {
  const reads: string[] = [];
  const api = {
    getAccounts: async () => accounts,
    operationsPage: async (q: { accountId: string; from: string; to: string }) => {
      if (missing.includes(q.accountId)) throw new TBankError('not-found', 'account not found', { apiCode: '50004' });
      reads.push(`${q.accountId} ${q.from.slice(0, 10)}..${q.to.slice(0, 10)}`);
      return {
        has_next: false,
        next_cursor: '',
        items: ops.filter((o) => o.account_id === q.accountId && o.date >= q.from && o.date < q.to),
      };
    },
  };
  return { api: api as unknown as TBankClient, reads };
}

const ctx = (api: TBankClient, data: MemorySyncDataStore, now: number, historyDays = 60): SectionContext => ({
  api,
  skipped: [],
  data,
  user: 'u1',
  attempt_id: 'a',
  now: () => now,
  log: silentLogger,
  settings: { ...DEFAULT_SECTION_SETTINGS, historyDays },
});

it('first sync reads every month of the history; empty never-synced months are not written; the newest always is', async () => {
  const data = new MemorySyncDataStore();
  const { api, reads } = fakeApi(
    [account('a1'), account('closed', 'ACCOUNT_STATUS_CLOSED')],
    [op('1', '2026-10-05T10:00:00.000Z')],
  );
  const now = Date.UTC(2026, 11, 2);
  expect(await SECTION_RUNNERS.operations(ctx(api, data, now))).toBe(1);
  expect(reads.sort()).toEqual(['a1 2026-10-01..2026-11-01', 'a1 2026-11-01..2026-12-01', 'a1 2026-12-01..2026-12-02']);
  expect([...data.windows.keys()].sort()).toEqual(['a1#2026-10', 'a1#2026-12']); // 2026-11 was empty and never synced
});

it('a later sync starts at the last window’s end minus the overlap, and replaces a window that became empty', async () => {
  const data = new MemorySyncDataStore();
  const first = fakeApi([account('a1')], [op('1', '2026-11-30T23:00:00.000Z'), op('2', '2026-12-01T09:00:00.000Z')]);
  await SECTION_RUNNERS.operations(ctx(first.api, data, Date.UTC(2026, 11, 2)));
  // Both operations vanished upstream (ids changed and moved, or were cancelled): the windows re-read must become empty.
  const later = fakeApi([account('a1')], []);
  await SECTION_RUNNERS.operations(ctx(later.api, data, Date.UTC(2026, 11, 3)));
  expect(later.reads.sort()).toEqual(['a1 2026-11-01..2026-12-01', 'a1 2026-12-01..2026-12-03']);
  expect(await data.operations('u1', '1970-01-01', '9999-01-01')).toEqual([]);
});

it('50004 skips that account only', async () => {
  const data = new MemorySyncDataStore();
  const { api } = fakeApi([account('gone'), account('a1')], [op('1', '2026-12-01T10:00:00.000Z')], ['gone']);
  expect(await SECTION_RUNNERS.operations(ctx(api, data, Date.UTC(2026, 11, 2), 1))).toBe(1);
});

it('40003 ends the section', async () => {
  const data = new MemorySyncDataStore();
  const api = {
    getAccounts: async () => Promise.reject(new TBankError('unauthenticated', 'token invalid', { apiCode: '40003' })),
  } as unknown as TBankClient;
  await expect(SECTION_RUNNERS.operations(ctx(api, data, Date.UTC(2026, 11, 2)))).rejects.toMatchObject({
    code: 'TOKEN_INVALID',
  });
});

describe('a first sync continuing across steps (decision 326)', () => {
  const now = Date.UTC(2026, 11, 2);
  const history = 150; // 2026-07 .. 2026-12: six month windows
  const months = ['2026-07', '2026-08', '2026-09', '2026-10', '2026-11', '2026-12'];
  const opsEveryMonth = months.map((m, i) => op(`${i}`, `${m}-01T10:00:00.000Z`));
  /** The handover is due once `reads` windows have been read by this step. */
  const handingOver = (reads: string[], after: number, resume: Record<string, string> = {}) => ({
    resume,
    due: () => reads.length >= after,
  });

  it('stops starting windows once the step is near its bound, hands over the first month not synced, and the continuation syncs the rest', async () => {
    const data = new MemorySyncDataStore();
    const first = fakeApi([account('a1')], opsEveryMonth);
    const c1 = { ...ctx(first.api, data, now, history), handover: handingOver(first.reads, 2) };
    const handed = await SECTION_RUNNERS.operations(c1).catch((err: unknown) => err);
    expect(handed).toBeInstanceOf(SectionContinues);
    const resume = (handed as SectionContinues).resume;
    // Two windows read and written; the newest is not (it marks the account synced), so a later sync cannot skip a month.
    expect(first.reads).toHaveLength(2);
    expect(resume).toEqual({ a1: '2026-09' });
    expect([...data.windows.keys()].sort()).toEqual(['a1#2026-07', 'a1#2026-08']);

    const next = fakeApi([account('a1')], opsEveryMonth);
    const c2 = { ...ctx(next.api, data, now, history), handover: handingOver(next.reads, 99, resume) };
    expect(await SECTION_RUNNERS.operations(c2)).toBe(4);
    expect(next.reads.map((r) => r.slice(3, 10)).sort()).toEqual(['2026-09', '2026-10', '2026-11', '2026-12']);
    expect([...data.windows.keys()].sort()).toEqual(months.map((m) => `a1#${m}`));
  });

  it('an account the step did not reach keeps its resume point; a finished account drops it', async () => {
    const data = new MemorySyncDataStore();
    const { api, reads } = fakeApi([account('a1'), account('a2')], opsEveryMonth);
    // a1 finishes (it resumes at 2026-11: two windows), then the step is due before a2 starts.
    const c = { ...ctx(api, data, now, history), handover: handingOver(reads, 2, { a1: '2026-11', a2: '2026-08' }) };
    const handed = (await SECTION_RUNNERS.operations(c).catch((err: unknown) => err)) as SectionContinues;
    expect(handed).toBeInstanceOf(SectionContinues);
    expect(handed.resume).toEqual({ a2: '2026-08' });
    expect(reads.map((r) => r.slice(0, 10)).sort()).toEqual(['a1 2026-11', 'a1 2026-12']);
  });

  it("the budget's refusal past the bound hands the window over; with nothing synced it stays the step's failure", async () => {
    const data = new MemorySyncDataStore();
    const { api, reads } = fakeApi([account('a1')], opsEveryMonth);
    const page = api.operationsPage.bind(api);
    let calls = 0;
    api.operationsPage = async (q) => {
      if (++calls > 3) throw new PastBoundError("the egress addresses' budget: past the step's bound");
      return page(q);
    };
    const c = { ...ctx(api, data, now, history), handover: handingOver(reads, 99) };
    const handed = (await SECTION_RUNNERS.operations(c).catch((err: unknown) => err)) as SectionContinues;
    expect(handed).toBeInstanceOf(SectionContinues);
    expect(handed.resume).toEqual({ a1: '2026-10' });

    calls = 99; // every call refused: no window synced, nothing to hand over
    const refused = await SECTION_RUNNERS.operations({ ...c, handover: handingOver([], 99, handed.resume) }).catch(
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(PastBoundError);
    expect((refused as PastBoundError).code).toBe('RATE_LIMITED');
  });

  it('windows are written in month order: one refused leaves no later window stored, so no sync can skip a hole', async () => {
    const data = new MemorySyncDataStore();
    const { api, reads } = fakeApi([account('a1')], opsEveryMonth);
    const page = api.operationsPage.bind(api);
    api.operationsPage = async (q) => {
      if (q.from.startsWith('2026-08')) throw new PastBoundError("the token's budget: past the step's bound");
      return page(q);
    };
    const c = { ...ctx(api, data, now, history), handover: handingOver(reads, 99) };
    const handed = (await SECTION_RUNNERS.operations(c).catch((err: unknown) => err)) as SectionContinues;
    expect(handed.resume).toEqual({ a1: '2026-08' });
    expect(reads.length).toBeGreaterThan(1); // later windows were read at once, and not written
    expect([...data.windows.keys()]).toEqual(['a1#2026-07']);
    expect((await data.lastOperationWindow('u1', 'a1'))?.month).toBe('2026-07');
  });

  it('a resume point that is not a month is ignored (the account is read from its stored state)', async () => {
    const data = new MemorySyncDataStore();
    const { api, reads } = fakeApi([account('a1')], opsEveryMonth);
    const c = { ...ctx(api, data, now, history), handover: handingOver(reads, 99, { a1: '2026-13' }) };
    expect(await SECTION_RUNNERS.operations(c)).toBe(6);
    expect(reads).toHaveLength(6);
  });
});
