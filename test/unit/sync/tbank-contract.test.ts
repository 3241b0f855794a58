import fs from 'node:fs';
import path from 'node:path';
import {
  parseAccounts,
  parseBondEvents,
  parseDividends,
  parseInstrument,
  parseOperationsPage,
  parsePortfolio,
} from '../../../lib/sync/tbank/contract';
import { errorBody } from '../../../lib/sync/tbank/client';
import { classify, ContractError } from '../../../lib/sync/tbank/errors';

/** Answers written from the documented contract (fixtures/tbank/, release 1.43 shapes): the parsers read them exactly. */
const fixture = (name: string) =>
  JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'fixtures', 'tbank', `${name}.json`), 'utf8'));

describe('parsers over documented answers', () => {
  it('GetAccounts', () => {
    expect(parseAccounts(fixture('GetAccounts'))).toEqual([
      {
        id: '2000000001',
        type: 'ACCOUNT_TYPE_TINKOFF',
        name: 'Брокерский счёт',
        status: 'ACCOUNT_STATUS_OPEN',
        access_level: 'ACCOUNT_ACCESS_LEVEL_READ_ONLY',
        opened_date: '2021-04-12T00:00:00.000Z',
        closed_date: undefined,
      },
      {
        id: '2000000002',
        type: 'ACCOUNT_TYPE_TINKOFF_IIS',
        name: 'ИИС',
        status: 'ACCOUNT_STATUS_CLOSED',
        access_level: 'ACCOUNT_ACCESS_LEVEL_FULL_ACCESS',
        opened_date: '2019-02-01T00:00:00.000Z',
        closed_date: '2024-05-30T00:00:00.000Z',
      },
    ]);
  });

  it('GetPortfolio: exact quantities, negative nano-only values', () => {
    const p = parsePortfolio(fixture('GetPortfolio'), '2000000001');
    expect(p.total_amount_portfolio).toEqual({ currency: 'rub', value: '30112.47' });
    expect(p.expected_yield).toBe('-1.5');
    expect(p.positions.map((x) => [x.ticker, x.quantity, x.current_price?.value])).toEqual([
      ['SBER', '100', '285.35'],
      ['USD000UTSTOM', '-0.01', '92.415'],
    ]);
  });

  it('GetOperationsByCursor: the page, its cursor, money and int64 quantities as strings', () => {
    const page = parseOperationsPage(fixture('GetOperationsByCursor'), '2000000001');
    expect([page.has_next, page.next_cursor]).toEqual([true, 'CjYKFgoIMjAyNC0xMS0']);
    expect(page.items[0]).toMatchObject({
      id: '34012345678',
      type: 'OPERATION_TYPE_BUY',
      payment: { currency: 'rub', value: '-2853.5' },
      commission: { value: '-1.43' },
      quantity: '10',
      instrument_kind: 'INSTRUMENT_TYPE_SHARE',
      date: '2026-11-20T07:00:01.123Z',
    });
    expect(page.items[1]).toMatchObject({ state: 'OPERATION_STATE_CANCELED', payment: { value: '-0.01' } });
    expect(() => parseOperationsPage(fixture('GetOperationsByCursor'), '9999')).toThrow("another account's operation");
  });

  it('GetDividends, GetBondEvents, GetInstrumentBy', () => {
    expect(parseDividends(fixture('GetDividends'))[0]).toMatchObject({
      dividend_net: { currency: 'rub', value: '33.3' },
      yield_value: '10.74',
    });
    expect(parseBondEvents(fixture('GetBondEvents'))[0]).toMatchObject({
      event_type: 'EVENT_TYPE_CPN',
      event_number: 7,
      pay_one_bond: { value: '35.4' },
      coupon_interest_rate: '7.1',
    });
    expect(parseInstrument(fixture('GetInstrumentBy'))).toEqual({
      figi: 'BBG004730N88',
      uid: 'e6123145-9665-43e0-8413-cd61b8aa9b13',
      ticker: 'SBER',
      class_code: 'TQBR',
      isin: 'RU0009029540',
      name: 'Сбер Банк',
      currency: 'rub',
      lot: 10,
      instrument_type: 'share',
      instrument_kind: 'INSTRUMENT_TYPE_SHARE',
    });
  });

  it('the API code comes from `message` (the gRPC status message, as declared) or `description`', () => {
    expect(errorBody(fixture('error-40003-message'))).toEqual({ apiCode: '40003', text: '40003' });
    expect(errorBody(fixture('error-40003'))).toEqual({
      apiCode: '40003',
      text: 'Authentication token is missing or invalid',
    });
    expect(errorBody({ code: 3, message: 'no data', description: '30238' }).apiCode).toBe('30238');
    // Not a 5-digit code in either field: none (the HTTP status decides).
    expect(errorBody({ message: '4000', description: '400031' }).apiCode).toBeUndefined();
    expect(errorBody('<html>').apiCode).toBeUndefined();
    expect(classify(401, errorBody(fixture('error-40003-message')).apiCode)).toBe('unauthenticated');
    expect(classify(404, '50004')).toBe('not-found');
    expect(classify(503, '12002')).toBe('retired');
    expect(classify(400, '30238')).toBe('no-data');
    expect(classify(500, '70001')).toBe('transient');
    expect(classify(429, undefined)).toBe('rate-limited');
    expect(classify(502, undefined)).toBe('transient');
  });

  it('an unknown enum value shaped like an enum name is kept raw and reported to the sink', () => {
    const body = fixture('GetAccounts');
    body.accounts[0].status = 'ACCOUNT_STATUS_FROZEN';
    const seen: string[] = [];
    expect(parseAccounts(body, (field, value) => seen.push(`${field}=${value}`))[0].status).toBe(
      'ACCOUNT_STATUS_FROZEN',
    );
    expect(seen).toEqual(['status=ACCOUNT_STATUS_FROZEN']);
    // Not an enum name at all: still a contract failure, sink or not.
    body.accounts[0].status = 'frozen; DROP';
    expect(() => parseAccounts(body, () => {})).toThrow(ContractError);
    body.accounts[0].status = 42;
    expect(() => parseAccounts(body, () => {})).toThrow('unknown value');
  });

  it.each([
    [
      'an unknown enum without a sink',
      (a: Record<string, unknown>) => (a.status = 'ACCOUNT_STATUS_FROZEN'),
      'unknown value',
    ],
    ['a missing id', (a: Record<string, unknown>) => delete a.id, 'missing'],
    ['a bad time', (a: Record<string, unknown>) => (a.openedDate = 'yesterday'), 'RFC 3339'],
  ])('%s is a ContractError naming the field', (_n, mutate, message) => {
    const body = fixture('GetAccounts');
    mutate(body.accounts[0]);
    expect(() => parseAccounts(body)).toThrow(ContractError);
    expect(() => parseAccounts(body)).toThrow(message);
  });
});
