import { BrokerageEmulator, Wire } from '../../../emulator/brokerage/emulator';
import { ACCOUNTS, INSTRUMENTS, OPERATIONS } from '../../../emulator/brokerage/dataset';
import { createLogger } from '../../../lib/log';
import { TBankClient, TBankClientOptions } from '../../../lib/sync/tbank/client';
import { TBankError } from '../../../lib/sync/tbank/errors';

/** The client against the emulator over real HTTP: every method, every error code, every broken answer. */
let emulator: BrokerageEmulator;
let url: string;
const lines: string[] = [];
beforeAll(async () => {
  emulator = new BrokerageEmulator({ windowMs: 2_000 });
  url = await emulator.listen();
});
afterAll(() => emulator.close());
afterEach(() => {
  emulator.reset();
  lines.length = 0;
});

const client = (over: Partial<TBankClientOptions> = {}) =>
  new TBankClient({
    baseUrl: url,
    token: `t.contract${Math.random().toString(36).slice(2)}`,
    appName: 'contract-test',
    signal: new AbortController().signal,
    remainingMs: () => 20_000,
    log: createLogger({}, { write: (line) => lines.push(line), level: 'debug' }),
    backoffMs: 5,
    ...over,
  });

async function failure(p: Promise<unknown>): Promise<TBankError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TBankError);
  return err as TBankError;
}

describe('read methods', () => {
  it('GetAccounts: every account of the owner with enum strings: one closed, one without access, one debit', async () => {
    const accounts = await client().getAccounts();
    expect(accounts.map((a) => [a.status, a.type, a.access_level])).toEqual([
      ['ACCOUNT_STATUS_OPEN', 'ACCOUNT_TYPE_TINKOFF', 'ACCOUNT_ACCESS_LEVEL_READ_ONLY'],
      ['ACCOUNT_STATUS_OPEN', 'ACCOUNT_TYPE_TINKOFF_IIS', 'ACCOUNT_ACCESS_LEVEL_READ_ONLY'],
      ['ACCOUNT_STATUS_CLOSED', 'ACCOUNT_TYPE_TINKOFF', 'ACCOUNT_ACCESS_LEVEL_READ_ONLY'],
      ['ACCOUNT_STATUS_OPEN', 'ACCOUNT_TYPE_TINKOFF', 'ACCOUNT_ACCESS_LEVEL_NO_ACCESS'],
      ['ACCOUNT_STATUS_OPEN', 'ACCOUNT_TYPE_DEBIT', 'ACCOUNT_ACCESS_LEVEL_FULL_ACCESS'],
    ]);
    expect(accounts[1]).toMatchObject({
      id: ACCOUNTS[1].id,
      type: 'ACCOUNT_TYPE_TINKOFF_IIS',
      name: 'ИИС',
      access_level: 'ACCOUNT_ACCESS_LEVEL_READ_ONLY',
    });
  });

  it('GetPortfolio: exact quantities and prices as decimal strings', async () => {
    const p = await client().getPortfolio(ACCOUNTS[0].id);
    expect(p.positions.length).toBeGreaterThan(3);
    for (const pos of p.positions) {
      expect(pos.quantity).toMatch(/^-?\d+(\.\d+)?$/);
      expect(pos.current_price).toEqual({
        currency: expect.stringMatching(/^[a-z]{3}$/),
        value: expect.stringMatching(/^-?\d+(\.\d+)?$/),
      });
    }
    expect(new Set(p.positions.map((x) => x.instrument_type))).toEqual(new Set(['share', 'bond', 'etf', 'currency']));
  });

  it('GetOperationsByCursor: every page of a window, limit 1000, newest first', async () => {
    const api = client();
    const from = '2025-01-01T00:00:00.000Z';
    const to = '2026-12-01T00:00:00.000Z';
    const all = [];
    let cursor: string | undefined;
    do {
      const page = await api.operationsPage({ accountId: ACCOUNTS[0].id, from, to, cursor, limit: 1000 });
      all.push(...page.items);
      cursor = page.has_next ? page.next_cursor : undefined;
    } while (cursor);
    expect(all.length).toBe(OPERATIONS.filter((o) => o.brokerAccountId === ACCOUNTS[0].id).length);
    expect(api.calls.OperationsService).toBe(2);
    expect(new Set(all.map((o) => o.state))).toEqual(
      new Set(['OPERATION_STATE_EXECUTED', 'OPERATION_STATE_CANCELED', 'OPERATION_STATE_PROGRESS']),
    );
    expect(new Set(all.map((o) => o.type)).size).toBeGreaterThan(10);
    expect(all.find((o) => o.type === 'OPERATION_TYPE_BUY')!.payment!.value).toMatch(/^-\d+(\.\d{1,2})?$/);
  });

  it('GetDividends, GetBondEvents, GetInstrumentBy (FIGI and UID)', async () => {
    const api = client();
    const share = INSTRUMENTS.find((i) => i.instrumentType === 'share')!;
    const bond = INSTRUMENTS.find((i) => i.instrumentType === 'bond')!;
    const dividends = await api.getDividends(share.uid, '2025-01-01T00:00:00Z', '2027-12-31T00:00:00Z');
    expect(dividends.length).toBeGreaterThan(3);
    expect(dividends[0].dividend_net).toEqual({ currency: share.currency, value: expect.any(String) });
    const coupons = await api.getBondEvents(bond.uid, '2025-01-01T00:00:00Z', '2027-12-31T00:00:00Z');
    expect(coupons[0]).toMatchObject({
      event_type: 'EVENT_TYPE_CPN',
      pay_one_bond: { currency: 'rub', value: '35.4' },
    });
    expect(await api.getInstrumentBy('INSTRUMENT_ID_TYPE_FIGI', share.figi)).toMatchObject({
      uid: share.uid,
      name: share.name,
    });
    expect(await api.getInstrumentBy('INSTRUMENT_ID_TYPE_UID', bond.uid)).toMatchObject({
      figi: bond.figi,
      name: 'ОФЗ 26238',
    });
  });
});

// Both ways T-Bank's gateway has answered: the code in `message` with `grpc-metadata-` headers (the emulator's
// default), and the code in `description` with bare headers.
const WIRES: Array<[string, Wire]> = [
  ['code in message, grpc-metadata- headers', { errorCodeIn: 'message', headers: 'prefixed' }],
  ['code in description, bare headers', { errorCodeIn: 'description', headers: 'bare' }],
];

describe.each(WIRES)('errors, typed from the API code (%s)', (_name, wire) => {
  beforeEach(() => (emulator.wire = { ...wire }));

  it.each([
    [40003, 'unauthenticated', 'TOKEN_INVALID', 1],
    [40002, 'forbidden', 'INSUFFICIENT_RIGHTS', 1],
    [50004, 'not-found', 'ACCOUNT_NOT_FOUND', 1],
    [50002, 'not-found', 'ACCOUNT_NOT_FOUND', 1],
    [30001, 'bad-request', 'UPSTREAM_REJECTED', 1],
    [12002, 'retired', 'METHOD_RETIRED', 1],
    [70001, 'transient', 'UPSTREAM_ERROR', 4],
    [70002, 'transient', 'UPSTREAM_ERROR', 4],
    [70003, 'transient', 'UPSTREAM_ERROR', 4],
  ])('%s → %s (%s) after %s call(s), with the tracking id', async (code, kind, stepCode, calls) => {
    emulator.faults['OperationsService/GetPortfolio'] = { error: code };
    const api = client();
    const err = await failure(api.getPortfolio(ACCOUNTS[0].id));
    expect([err.kind, err.code, err.detail.apiCode]).toEqual([kind, stepCode, String(code)]);
    expect(err.message).not.toMatch(/: \d{5}$/); // the human text, not the code twice
    expect(err.trackingId).toMatch(/^[0-9a-f]{32}$/);
    expect(api.calls.OperationsService).toBe(calls);
    const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.event === 'tbank_call_failed');
    expect(logged).toHaveLength(calls);
    for (const l of logged) expect(l.tracking_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('30238 (no data for the period) reads as an empty period on period queries, once', async () => {
    emulator.faults['*'] = { error: 30238 };
    const api = client();
    const page = await api.operationsPage({
      accountId: ACCOUNTS[0].id,
      from: '2020-01-01T00:00:00Z',
      to: '2020-02-01T00:00:00Z',
      limit: 1000,
    });
    expect(page).toEqual({ has_next: false, next_cursor: '', items: [] });
    const share = INSTRUMENTS.find((i) => i.instrumentType === 'share')!;
    expect(await api.getDividends(share.uid, '2020-01-01T00:00:00Z', '2020-02-01T00:00:00Z')).toEqual([]);
    expect(await api.getBondEvents(share.uid, '2020-01-01T00:00:00Z', '2020-02-01T00:00:00Z')).toEqual([]);
    expect(api.calls).toEqual({ OperationsService: 1, InstrumentsService: 2 });
    // Not a period query: a refusal.
    expect((await failure(api.getPortfolio(ACCOUNTS[0].id))).code).toBe('UPSTREAM_REJECTED');
  });

  it('a 429 carries the reset seconds and the tracking id from the headers', async () => {
    emulator.faults.UsersService = { storm: true };
    const err = await failure(client({ rateLimitWaits: 0 }).getAccounts());
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.detail.resetSeconds).toEqual(expect.any(Number));
    expect(err.trackingId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a success logs the tracking id', async () => {
    await client().getAccounts();
    const ok = lines.map((l) => JSON.parse(l)).find((l) => l.event === 'tbank_call');
    expect(ok.tracking_id).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('errors, typed from the API code', () => {
  it('a missing token is 40003 from the API itself', async () => {
    const err = await failure(client({ token: 'not-a-token' }).getAccounts());
    expect([err.kind, err.detail.status]).toEqual(['unauthenticated', 401]);
  });

  it('a transient fault that clears is retried and succeeds', async () => {
    emulator.faults.UsersService = { error: 70001, times: 2 };
    const api = client();
    expect(await api.getAccounts()).toHaveLength(ACCOUNTS.length);
    expect(api.calls.UsersService).toBe(3);
  });

  it('80002: waits for x-ratelimit-reset and retries; a storm ends RATE_LIMITED after its bound', async () => {
    emulator.faults.UsersService = { storm: true, times: 1 };
    const api = client();
    expect(await api.getAccounts()).toHaveLength(ACCOUNTS.length);
    expect(api.rateLimited).toBe(1);

    emulator.faults.UsersService = { storm: true };
    const stormy = client({ rateLimitWaits: 2 });
    const err = await failure(stormy.getAccounts());
    expect([err.kind, err.code, err.detail.apiCode, err.detail.status]).toEqual([
      'rate-limited',
      'RATE_LIMITED',
      '80002',
      429,
    ]);
    expect(stormy.calls.UsersService).toBe(3);
  }, 20_000);

  it('a reset wait longer than the remaining time fails at once', async () => {
    emulator.faults.UsersService = { storm: true };
    const api = client({ remainingMs: () => 500 });
    const started = performance.now();
    expect((await failure(api.getAccounts())).code).toBe('RATE_LIMITED');
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('the emulator enforces its own window per token and service (real limiter, not a fault)', async () => {
    const api = client({ rateLimitWaits: 0 });
    // 250 calls span at most two 2 s windows: one of them holds more than the limit of 100.
    const results = await Promise.allSettled(
      Array.from({ length: 250 }, () => api.call('UsersService', 'GetAccounts', {}, (b) => b)),
    );
    expect(results.filter((r) => r.status === 'rejected').length).toBeGreaterThan(0);
    expect(emulator.rateLimited).toBeGreaterThan(0);
  });

  it.each([
    ['html', 'UPSTREAM_ERROR'], // a 502 HTML page is an upstream failure, retried, then UPSTREAM_ERROR
    ['truncate', 'BAD_UPSTREAM_ANSWER'],
    ['badMoney', 'BAD_UPSTREAM_ANSWER'],
  ])('%s → %s, a clear error', async (fault, code) => {
    emulator.faults['*'] = { [fault]: true };
    const err = await failure(client().getPortfolio(ACCOUNTS[0].id));
    expect(err.code).toBe(code);
    expect(err.message.length).toBeGreaterThan(10);
    expect(err.trackingId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('badEnum: an enum value newer than the contract is kept raw and counted, not an error', async () => {
    emulator.faults['*'] = { badEnum: true };
    const api = client();
    const accounts = await api.getAccounts();
    expect(accounts[0].status).toBe('ACCOUNT_STATUS_FROM_THE_FUTURE');
    expect([...api.unknownValues]).toEqual([['status=ACCOUNT_STATUS_FROM_THE_FUTURE', 1]]);
  });

  it('a hang ends with the caller’s signal', async () => {
    emulator.faults.UsersService = { hang: true };
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('step bound')), 200);
    await expect(client({ signal: controller.signal }).getAccounts()).rejects.toThrow('step bound');
  });
});
