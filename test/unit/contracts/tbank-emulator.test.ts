import { ACCOUNTS, dividendsOf, INSTRUMENTS } from '../../../emulator/brokerage/dataset';
import { BrokerageEmulator } from '../../../emulator/brokerage/emulator';
import { createLogger, silentLogger } from '../../../lib/log';
import { DEFAULT_SECTION_SETTINGS, SECTION_RUNNERS } from '../../../lib/sync/sections';
import { TBankClient } from '../../../lib/sync/tbank/client';
import { TBankError } from '../../../lib/sync/tbank/errors';
import { MemorySyncDataStore } from '../../support/memory-sync-data-store';

/**
 * The brokerage emulator's behaviour where the official contracts (test/contracts/tbank/) decide it:
 * GetDividends' period, the errors' gRPC type and HTTP status, the code of each refusal, the gateway's
 * own answers. The conformance test checks shapes; this one checks what a caller sees.
 */

let emulator: BrokerageEmulator;
let url: string;
beforeAll(async () => {
  emulator = new BrokerageEmulator({ addressLimits: false });
  url = await emulator.listen();
});
afterAll(() => emulator.close());
afterEach(() => emulator.reset());

const PREFIX = '/rest/tinkoff.public.invest.api.contract.v1.';
async function call(name: string, body: unknown, init: RequestInit = {}) {
  const res = await fetch(`${url}${PREFIX}${name}`, {
    method: 'POST',
    headers: { authorization: 'Bearer t.emulator-test', 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const client = () =>
  new TBankClient({
    baseUrl: url,
    token: 't.emulator-test',
    appName: 'emulator-test',
    signal: new AbortController().signal,
    remainingMs: () => 10_000,
    log: silentLogger,
    retries: 0,
  });

const share = INSTRUMENTS.find((i) => i.instrumentType === 'share')!;
const bond = INSTRUMENTS.find((i) => i.instrumentType === 'bond')!;

describe('GetDividends: from/to filter by record_date (instruments.proto, GetDividendsRequest)', () => {
  it('a period holding the record date, not the payment date, answers the dividend; the reverse answers none', async () => {
    // The dataset's March 2026 dividend: register closed 2026-03-06, paid 2026-03-20.
    const march = dividendsOf(share).find((d) => d.recordDate.startsWith('2026-03'))!;
    expect([march.recordDate, march.paymentDate]).toEqual(['2026-03-06T00:00:00.000Z', '2026-03-20T00:00:00.000Z']);
    const api = client();
    const byRecord = await api.getDividends(share.uid, '2026-03-01T00:00:00Z', '2026-03-10T00:00:00Z');
    expect(byRecord.map((d) => [d.record_date, d.payment_date])).toEqual([
      ['2026-03-06T00:00:00.000Z', '2026-03-20T00:00:00.000Z'],
    ]);
    expect(await api.getDividends(share.uid, '2026-03-15T00:00:00Z', '2026-03-25T00:00:00Z')).toEqual([]);
  });

  const refresh = (data: MemorySyncDataStore, log = silentLogger) =>
    SECTION_RUNNERS['events.refresh']({
      api: client(),
      data,
      user: 'u1',
      attempt_id: 'a',
      now: () => Date.UTC(2026, 2, 10),
      log,
      settings: { ...DEFAULT_SECTION_SETTINGS, eventsWindowDays: 5 }, // 2026-03-05 .. 2026-03-15
      skipped: [],
    });

  it('the sync’s events.refresh stores a dividend whose register closes inside its window though it is paid after it', async () => {
    const data = new MemorySyncDataStore();
    expect(await refresh(data)).toBeGreaterThan(0);
    expect(data.events.get(share.uid)).toEqual({ dividends: 1, bond_events: 0 });
  });

  it('events.refresh skips a held instrument GetDividends does not know (50002) and stores the others', async () => {
    emulator.faults['InstrumentsService/GetDividends'] = { error: 50002, times: 1 };
    const data = new MemorySyncDataStore();
    const lines: string[] = [];
    expect(await refresh(data, createLogger({}, { write: (l) => lines.push(l), level: 'warn' }))).toBeGreaterThan(0);
    const unknown = lines.map((l) => JSON.parse(l)).filter((l) => l.event === 'sync_instrument_unknown');
    expect(unknown).toHaveLength(1);
    expect(data.events.has(unknown[0].instrument_uid)).toBe(false);
    expect(data.events.get(share.uid) ?? data.events.get(INSTRUMENTS[1].uid)).toEqual({ dividends: 1, bond_events: 0 });
  });
});

describe('errors: the official gRPC type, its HTTP status (the gateway’s mapping) and the official text', () => {
  it.each([
    [12002, 503, 14, 'Deprecated method is unavailable', 'retired'],
    [70002, 500, 13, 'Internal network error', 'transient'],
    [70001, 500, 13, 'Internal error', 'transient'],
    [80002, 429, 8, 'Request limit exceeded', 'rate-limited'],
    [40003, 401, 16, 'Authentication token is missing or invalid', 'unauthenticated'],
  ])('%s: HTTP %s, gRPC %s, %j; the client reads it as %s', async (code, status, grpc, text, kind) => {
    emulator.faults['UsersService/GetAccounts'] = { error: code };
    expect(await call('UsersService/GetAccounts', {})).toEqual({
      status,
      body: { code: grpc, message: String(code), description: text, details: [] },
    });
    const err = (await client()
      .getAccounts()
      .catch((e: unknown) => e)) as TBankError;
    expect([err.kind, err.detail.status, err.detail.apiCode]).toEqual([kind, status, String(code)]);
    expect(err.message).toContain(text);
  });

  it('a fault naming a code outside the official table is refused', async () => {
    const res = await fetch(`${url}/emulator/faults`, {
      method: 'PUT',
      body: JSON.stringify({ '*': { error: 12345 } }),
    });
    expect(res.status).toBe(400);
    expect(emulator.faults).toEqual({});
  });
});

describe('refusals carry the official code of their cause', () => {
  const account = ACCOUNTS[0].id;
  const rows: Array<[string, string, object, number]> = [
    ['GetInstrumentBy without id_type', 'InstrumentsService/GetInstrumentBy', { id: share.uid }, 30006],
    ['GetInstrumentBy, unknown id_type', 'InstrumentsService/GetInstrumentBy', { idType: 'ISIN', id: 'x' }, 30005],
    ['GetInstrumentBy without id', 'InstrumentsService/GetInstrumentBy', { idType: 'INSTRUMENT_ID_TYPE_UID' }, 30007],
    [
      'GetInstrumentBy, a ticker without class_code',
      'InstrumentsService/GetInstrumentBy',
      { idType: 'INSTRUMENT_ID_TYPE_TICKER', id: share.ticker },
      30013,
    ],
    [
      'GetInstrumentBy, an unknown instrument',
      'InstrumentsService/GetInstrumentBy',
      { idType: 'INSTRUMENT_ID_TYPE_UID', id: 'nope' },
      50002,
    ],
    ['GetDividends without an instrument', 'InstrumentsService/GetDividends', {}, 30093],
    ['GetDividends, an unknown instrument', 'InstrumentsService/GetDividends', { instrumentId: 'nope' }, 50002],
    ['GetBondEvents without an instrument', 'InstrumentsService/GetBondEvents', {}, 30237],
    [
      'GetBondEvents, `to` before `from`',
      'InstrumentsService/GetBondEvents',
      { instrumentId: bond.uid, from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' },
      30012,
    ],
    ['GetOperationsByCursor without account_id', 'OperationsService/GetOperationsByCursor', {}, 30021],
    [
      'GetOperationsByCursor, limit 1001',
      'OperationsService/GetOperationsByCursor',
      { accountId: account, limit: 1001 },
      30069,
    ],
    [
      'GetOperationsByCursor, `from` unreadable',
      'OperationsService/GetOperationsByCursor',
      { accountId: account, from: 'yesterday' },
      30009,
    ],
    [
      'GetOperationsByCursor, `to` unreadable',
      'OperationsService/GetOperationsByCursor',
      { accountId: account, to: 'tomorrow' },
      30010,
    ],
    [
      'GetOperationsByCursor, a cursor it never issued',
      'OperationsService/GetOperationsByCursor',
      { accountId: account, cursor: 'not-ours' },
      70001,
    ],
    ['GetPortfolio, an unknown account', 'OperationsService/GetPortfolio', { accountId: '1' }, 50004],
    ['a method the emulator does not implement', 'OperationsService/GetOperations', { accountId: account }, 12001],
  ];
  it.each(rows.map(([name, method, body, code]) => [name, code, method, body] as const))(
    '%s → %s',
    async (_name, code, method, body) => {
      const { body: answer } = await call(method, body);
      expect(answer.message).toBe(String(code));
    },
  );

  it('GetInstrumentBy by position uid (INSTRUMENT_ID_TYPE_POSITION_UID) finds the instrument', async () => {
    const { status, body } = await call('InstrumentsService/GetInstrumentBy', {
      idType: 'INSTRUMENT_ID_TYPE_POSITION_UID',
      id: `pos-${bond.uid}`,
    });
    expect([status, (body.instrument as { uid: string }).uid]).toEqual([200, bond.uid]);
  });
});

describe('the gateway’s own refusals carry no API code', () => {
  it.each([
    ['an unknown path', '/rest/nope', 'POST', '{}', 404, 5, 'Not Found'],
    ['GET on a method', `${PREFIX}UsersService/GetAccounts`, 'GET', undefined, 501, 12, 'Method Not Allowed'],
    ['a body that is not JSON', `${PREFIX}UsersService/GetAccounts`, 'POST', '{', 400, 3, expect.any(String)],
    ['a body that is a JSON list', `${PREFIX}UsersService/GetAccounts`, 'POST', '[]', 400, 3, expect.any(String)],
  ])('%s (%s %s)', async (_name, path, method, body, status, code, message) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: 'Bearer t.emulator-test' },
      body,
    });
    expect([res.status, await res.json()]).toEqual([status, { code, message, details: [] }]);
  });

  it('the client reads a body the gateway could not decode as a refusal (UPSTREAM_REJECTED), not as an API code', async () => {
    const err = (await client()
      .call('UsersService', 'GetAccounts', [] as unknown as object, (b) => b)
      .catch((e: unknown) => e)) as TBankError;
    expect([err.kind, err.code, err.detail.apiCode]).toEqual(['bad-request', 'UPSTREAM_REJECTED', undefined]);
  });
});
