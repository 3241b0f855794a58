import type { StoredAccount, StoredEvents, StoredPortfolio } from '../../lib/sync/holdings-store';
import type { HourlyHead } from '../../lib/sync/model';
import { parseBondEvents, parseDividends, parsePortfolio } from '../../lib/sync/tbank/contract';
import type { Instrument } from '../../lib/sync/tbank/contract';

/**
 * A fixture portfolio as T-Bank's REST gateway sends it (MoneyValue/Quotation as units + nano), parsed by the
 * contract's own parsers into what the steps store: two accounts, one share held in both, a bond with a coupon,
 * its redemption and an offer (not a payment), an ETF whose dividend has no payment date yet, a fractional
 * holding whose expected dividend needs more than 9 fractional digits, hostile names.
 */

export const USER = '01jdkq0m7a4zfx9s2e6ys3b8c1';
export const SYNCED_AT = Date.UTC(2026, 11, 7, 5, 0, 0);
const mv = (currency: string, units: string, nano: number) => ({ currency, units, nano });
const q = (units: string, nano = 0) => ({ units, nano });
const ts = (day: string) => `${day}T00:00:00Z`;

export const UID = {
  sber: 'e6123145-9665-43e0-8413-cd61b8aa9b13',
  ofz: 'a3f1c2d4-0000-4000-8000-000000000026',
  tmos: '9654c2dd-6993-427e-80fa-04e80a1cf4da',
  frac: 'b1b2b3b4-1111-4222-8333-444455556666',
} as const;

export const WIRE_PORTFOLIOS: Record<string, unknown> = {
  '2000000001': {
    totalAmountPortfolio: mv('rub', '123456', 780_000_000),
    expectedYield: q('-1', -250_000_000),
    positions: [
      {
        figi: 'BBG004730N88',
        instrumentUid: UID.sber,
        instrumentType: 'share',
        ticker: 'SBER',
        classCode: 'TQBR',
        quantity: q('130'),
        averagePositionPrice: mv('rub', '280', 150_000_000),
        currentPrice: mv('rub', '301', 200_000_000),
        expectedYield: q('2737', 500_000_000),
      },
      {
        figi: 'SU26238RMFS4',
        instrumentUid: UID.ofz,
        instrumentType: 'bond',
        ticker: 'SU26238RMFS4',
        quantity: q('15'),
        averagePositionPrice: mv('rub', '967', 500_000_000),
        currentPrice: mv('rub', '955', 10_000_000),
        expectedYield: q('-187', -350_000_000),
      },
      {
        figi: 'TCS00A107597',
        instrumentUid: UID.tmos,
        instrumentType: 'etf',
        ticker: 'TMOS',
        quantity: q('1000'),
        averagePositionPrice: mv('rub', '6', 120_000_000),
        currentPrice: mv('rub', '6', 980_000_000),
      },
    ],
  },
  '2000000002': {
    totalAmountPortfolio: mv('rub', '3012', 0),
    positions: [
      {
        figi: 'BBG004730N88',
        instrumentUid: UID.sber,
        instrumentType: 'share',
        ticker: 'SBER',
        quantity: q('10'),
        averagePositionPrice: mv('rub', '290', 0),
        currentPrice: mv('rub', '301', 200_000_000),
      },
      {
        figi: 'BBGFRACTION1',
        instrumentUid: UID.frac,
        instrumentType: 'share',
        ticker: '=FRAC',
        quantity: q('0', 500_000_001),
        averagePositionPrice: mv('usd', '120', 333_333_333),
        currentPrice: mv('usd', '121', 0),
      },
    ],
  },
};

export const WIRE_DIVIDENDS: Record<string, unknown> = {
  [UID.sber]: {
    dividends: [
      { dividendNet: mv('rub', '34', 840_000_000), paymentDate: ts('2026-07-20'), recordDate: ts('2026-07-18') },
      { dividendNet: mv('rub', '33', 300_000_000), paymentDate: ts('2026-12-20'), recordDate: ts('2026-12-06') },
      { paymentDate: ts('2027-02-10'), recordDate: ts('2027-01-25') },
    ],
  },
  [UID.tmos]: { dividends: [{ dividendNet: mv('rub', '0', 120_000_000), recordDate: ts('2027-01-10') }] },
  [UID.frac]: {
    dividends: [
      { dividendNet: mv('usd', '0', 333_333_333), paymentDate: ts('2027-01-05'), recordDate: ts('2026-12-28') },
    ],
  },
};

export const WIRE_BOND_EVENTS = {
  events: [
    {
      instrumentId: UID.ofz,
      eventNumber: 7,
      eventType: 'EVENT_TYPE_CPN',
      eventDate: ts('2026-12-15'),
      fixDate: ts('2026-12-14'),
      payDate: ts('2026-12-15'),
      payOneBond: mv('rub', '35', 400_000_000),
    },
    {
      instrumentId: UID.ofz,
      eventNumber: 8,
      eventType: 'EVENT_TYPE_CALL',
      eventDate: ts('2027-01-10'),
      payDate: ts('2027-01-10'),
    },
    {
      instrumentId: UID.ofz,
      eventNumber: 9,
      eventType: 'EVENT_TYPE_MTY',
      eventDate: ts('2027-01-20'),
      fixDate: ts('2027-01-19'),
      payDate: ts('2027-01-20'),
      payOneBond: mv('rub', '1000', 0),
    },
  ],
};

export const INSTRUMENTS: Instrument[] = [
  { figi: 'BBG004730N88', uid: UID.sber, ticker: 'SBER', name: 'Сбер Банк', currency: 'rub', lot: 10 },
  { figi: 'SU26238RMFS4', uid: UID.ofz, ticker: 'SU26238RMFS4', name: 'ОФЗ 26238; "длинная", 2041', currency: 'rub' },
  { figi: 'TCS00A107597', uid: UID.tmos, ticker: 'TMOS', name: 'Тинькофф iMOEX\nфонд', currency: 'rub' },
  { figi: 'BBGFRACTION1', uid: UID.frac, ticker: '=FRAC', name: '@SUM(1+1) Fraction, Inc.', currency: 'usd' },
];

export function storedFixture(syncedAt = SYNCED_AT) {
  const portfolios: StoredPortfolio[] = Object.entries(WIRE_PORTFOLIOS).map(([account, body]) => ({
    ...parsePortfolio(body, account),
    synced_at: syncedAt,
  }));
  const accounts: StoredAccount[] = [
    {
      id: '2000000001',
      type: 'ACCOUNT_TYPE_TINKOFF',
      name: 'Брокерский счёт',
      status: 'ACCOUNT_STATUS_OPEN',
      access_level: 'ACCOUNT_ACCESS_LEVEL_FULL_ACCESS',
      synced_at: syncedAt,
    },
    {
      id: '2000000002',
      type: 'ACCOUNT_TYPE_TINKOFF_IIS',
      name: 'ИИС',
      status: 'ACCOUNT_STATUS_OPEN',
      access_level: 'ACCOUNT_ACCESS_LEVEL_FULL_ACCESS',
      synced_at: syncedAt,
    },
  ];
  const events: StoredEvents[] = [
    ...Object.entries(WIRE_DIVIDENDS).map(([uid, body]) => ({
      instrument_uid: uid,
      dividends: parseDividends(body),
      bond_events: [],
      synced_at: syncedAt,
    })),
    { instrument_uid: UID.ofz, dividends: [], bond_events: parseBondEvents(WIRE_BOND_EVENTS), synced_at: syncedAt },
  ];
  return { portfolios, accounts, events, instruments: new Map(INSTRUMENTS.map((i) => [i.uid, i])) };
}

export const attempt = (id: string, startedAt: number, over: Partial<HourlyHead> = {}): HourlyHead => ({
  user_id: USER,
  attempt_id: id,
  state: 'succeeded',
  started_at: startedAt,
  finished_at: startedAt + 60_000,
  run_id: 'r',
  run_deadline: startedAt + 55_000,
  walk_completed: true,
  children: {},
  revision: 3,
  ...over,
});

/** Every MoneyValue of the wire fixture that the views carry, as total nanos by currency (the sum to compare). */
export const nanosOf = (m: { units: string; nano: number }) => BigInt(m.units) * 1_000_000_000n + BigInt(m.nano);
