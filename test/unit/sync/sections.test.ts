import { silentLogger } from '../../../lib/log';
import { MemorySyncDataStore } from '../../support/memory-sync-data-store';
import { DEFAULT_SECTION_SETTINGS, SECTION_RUNNERS, SectionContext } from '../../../lib/sync/sections';
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
