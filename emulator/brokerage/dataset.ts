/**
 * The emulator's seeded, realistic T-Bank dataset, generated the same on every
 * run (a fixed seed, fixed dates): 3 accounts (broker, IIS, one closed), about
 * 2,400 operations from 2025-01 to 2026-11 over many OPERATION_TYPE_* values
 * and all three states, rub/usd/cny, shares, bonds, ETFs and currencies,
 * dividends and coupons, Cyrillic names. Answers are built in the wire shape
 * (camelCase, MoneyValue/Quotation with units as strings).
 */

export interface WireInstrument {
  figi: string;
  uid: string;
  ticker: string;
  classCode: string;
  isin: string;
  name: string;
  currency: string;
  lot: number;
  instrumentType: 'share' | 'bond' | 'etf' | 'currency';
  instrumentKind: string;
  price: bigint; // nanos
}

const kind = {
  share: 'INSTRUMENT_TYPE_SHARE',
  bond: 'INSTRUMENT_TYPE_BOND',
  etf: 'INSTRUMENT_TYPE_ETF',
  currency: 'INSTRUMENT_TYPE_CURRENCY',
} as const;
const N = 1_000_000_000n;
const instrument = (
  figi: string,
  ticker: string,
  classCode: string,
  isin: string,
  name: string,
  currency: string,
  lot: number,
  type: WireInstrument['instrumentType'],
  price: bigint,
  n: number,
): WireInstrument => ({
  figi,
  uid: `${(0x1000_0000 + n).toString(16)}-7e1a-4b2c-9d3e-${String(n).padStart(12, '0')}`,
  ticker,
  classCode,
  isin,
  name,
  currency,
  lot,
  instrumentType: type,
  instrumentKind: kind[type],
  price,
});

export const INSTRUMENTS: WireInstrument[] = [
  instrument('BBG004730N88', 'SBER', 'TQBR', 'RU0009029540', 'Сбер Банк', 'rub', 10, 'share', 285_350_000_000n, 1),
  instrument('BBG004730RP0', 'GAZP', 'TQBR', 'RU0007661625', 'Газпром', 'rub', 10, 'share', 128_740_000_000n, 2),
  instrument('BBG004731032', 'LKOH', 'TQBR', 'RU0009024277', 'ЛУКОЙЛ', 'rub', 1, 'share', 6_912_500_000_000n, 3),
  instrument('BBG000B9XRY4', 'AAPL', 'SPBXM', 'US0378331005', 'Apple', 'usd', 1, 'share', 189_250_000_000n, 4),
  instrument(
    'BBG00R240WL5',
    'SU26238RMFS4',
    'TQOB',
    'RU000A1038V6',
    'ОФЗ 26238',
    'rub',
    1,
    'bond',
    583_400_000_000n,
    5,
  ),
  instrument(
    'BBG00XH4W3N3',
    'RU000A102CL3',
    'TQCB',
    'RU000A102CL3',
    'Роснефть выпуск 2',
    'rub',
    1,
    'bond',
    998_100_000_000n,
    6,
  ),
  instrument(
    'TCS00A105EX7',
    'TMOS',
    'TQTF',
    'RU000A101X76',
    'Тинькофф Индекс МосБиржи',
    'rub',
    1,
    'etf',
    6_825_000_000n,
    7,
  ),
  instrument('BBG0013HGFT4', 'USD000UTSTOM', 'CETS', '', 'Доллар США', 'rub', 1000, 'currency', 92_415_000_000n, 8),
  instrument('BBG0013HRTL0', 'CNYRUB_TOM', 'CETS', '', 'Юань', 'rub', 1, 'currency', 12_705_000_000n, 9),
];

export interface WireAccount {
  id: string;
  type: string;
  name: string;
  status: string;
  openedDate: string;
  closedDate?: string;
  accessLevel: string;
}

export const ACCOUNTS: WireAccount[] = [
  {
    id: '2000114821',
    type: 'ACCOUNT_TYPE_TINKOFF',
    name: 'Брокерский счёт',
    status: 'ACCOUNT_STATUS_OPEN',
    openedDate: '2024-12-02T00:00:00Z',
    accessLevel: 'ACCOUNT_ACCESS_LEVEL_READ_ONLY',
  },
  {
    id: '2000221907',
    type: 'ACCOUNT_TYPE_TINKOFF_IIS',
    name: 'ИИС',
    status: 'ACCOUNT_STATUS_OPEN',
    openedDate: '2025-01-15T00:00:00Z',
    accessLevel: 'ACCOUNT_ACCESS_LEVEL_READ_ONLY',
  },
  {
    id: '2000330015',
    type: 'ACCOUNT_TYPE_TINKOFF',
    name: 'Старый счёт',
    status: 'ACCOUNT_STATUS_CLOSED',
    openedDate: '2023-03-01T00:00:00Z',
    closedDate: '2024-11-30T00:00:00Z',
    accessLevel: 'ACCOUNT_ACCESS_LEVEL_READ_ONLY',
  },
  // GetAccounts lists every account of the owner: one this token may not read, and a bank (debit) account.
  {
    id: '2000440023',
    type: 'ACCOUNT_TYPE_TINKOFF',
    name: 'Счёт супруги',
    status: 'ACCOUNT_STATUS_OPEN',
    openedDate: '2025-06-01T00:00:00Z',
    accessLevel: 'ACCOUNT_ACCESS_LEVEL_NO_ACCESS',
  },
  {
    id: '5000550031',
    type: 'ACCOUNT_TYPE_DEBIT',
    name: 'Дебетовая карта',
    status: 'ACCOUNT_STATUS_OPEN',
    openedDate: '2022-02-14T00:00:00Z',
    accessLevel: 'ACCOUNT_ACCESS_LEVEL_FULL_ACCESS',
  },
];

/** The accounts whose brokerage methods answer: open, brokerage, with access. */
export const READABLE_ACCOUNTS = ACCOUNTS.filter(
  (a) =>
    a.accessLevel !== 'ACCOUNT_ACCESS_LEVEL_NO_ACCESS' &&
    (a.type === 'ACCOUNT_TYPE_TINKOFF' || a.type === 'ACCOUNT_TYPE_TINKOFF_IIS'),
);

/**
 * An operation type newer than the contract release the sync was built from (T-Bank adds them between
 * releases): every 100th operation of the first account carries it.
 */
export const LATER_OPERATION_TYPE = 'OPERATION_TYPE_FROM_A_LATER_RELEASE';

export const moneyValue = (currency: string, nanos: bigint) => ({
  currency,
  units: (nanos / N).toString(),
  nano: Number(nanos % N),
});
export const quotationOf = (nanos: bigint) => ({ units: (nanos / N).toString(), nano: Number(nanos % N) });

export interface WireOperation {
  cursor: string;
  brokerAccountId: string;
  id: string;
  parentOperationId: string;
  name: string;
  date: string;
  type: string;
  description: string;
  state: string;
  instrumentUid: string;
  figi: string;
  instrumentType: string;
  instrumentKind: string;
  positionUid: string;
  payment: ReturnType<typeof moneyValue>;
  price: ReturnType<typeof moneyValue>;
  commission: ReturnType<typeof moneyValue>;
  quantity: string;
  quantityRest: string;
  quantityDone: string;
}

/** mulberry32: a tiny seeded PRNG, so the dataset is the same on every run. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DESCRIPTIONS: Record<string, string> = {
  OPERATION_TYPE_BUY: 'Покупка ценных бумаг',
  OPERATION_TYPE_SELL: 'Продажа ценных бумаг',
  OPERATION_TYPE_BROKER_FEE: 'Удержание комиссии за операцию',
  OPERATION_TYPE_DIVIDEND: 'Выплата дивидендов',
  OPERATION_TYPE_DIVIDEND_TAX: 'Удержание налога по дивидендам',
  OPERATION_TYPE_COUPON: 'Выплата купонов',
  OPERATION_TYPE_BOND_REPAYMENT: 'Частичное погашение облигаций',
  OPERATION_TYPE_INPUT: 'Пополнение брокерского счёта',
  OPERATION_TYPE_OUTPUT: 'Вывод денежных средств',
  OPERATION_TYPE_TAX: 'Удержание налога',
  OPERATION_TYPE_SERVICE_FEE: 'Удержание комиссии за обслуживание брокерского счёта',
  OPERATION_TYPE_INPUT_SECURITIES: 'Зачисление ценных бумаг',
  OPERATION_TYPE_BUY_CARD: 'Покупка ценных бумаг с банковской карты',
  OPERATION_TYPE_OVERNIGHT: 'Доход по сделкам овернайт',
};

const START = Date.UTC(2025, 0, 2, 7, 0, 0);
const END = Date.UTC(2026, 10, 30, 20, 0, 0);

function generateOperations(): WireOperation[] {
  const rand = prng(20261203);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const ops: WireOperation[] = [];
  const open = READABLE_ACCOUNTS.filter((a) => a.status === 'ACCOUNT_STATUS_OPEN');
  const tradable = INSTRUMENTS;
  const per = [1400, 1000];
  open.forEach((account, ai) => {
    for (let i = 0; i < per[ai]; i++) {
      const at = START + Math.floor(rand() * (END - START));
      const date = new Date(at - (at % 1000))
        .toISOString()
        .replace('.000Z', `.${String(Math.floor(rand() * 1e6)).padStart(6, '0')}Z`);
      const r = rand();
      const inst = pick(tradable);
      let type: string;
      if (r < 0.34) type = 'OPERATION_TYPE_BUY';
      else if (r < 0.5) type = 'OPERATION_TYPE_SELL';
      else if (r < 0.72) type = 'OPERATION_TYPE_BROKER_FEE';
      else if (r < 0.78) type = inst.instrumentType === 'bond' ? 'OPERATION_TYPE_COUPON' : 'OPERATION_TYPE_DIVIDEND';
      else if (r < 0.82) type = 'OPERATION_TYPE_DIVIDEND_TAX';
      else if (r < 0.87) type = 'OPERATION_TYPE_INPUT';
      else if (r < 0.89) type = 'OPERATION_TYPE_OUTPUT';
      else if (r < 0.91) type = 'OPERATION_TYPE_TAX';
      else if (r < 0.93) type = 'OPERATION_TYPE_SERVICE_FEE';
      else if (r < 0.95) type = 'OPERATION_TYPE_BOND_REPAYMENT';
      else if (r < 0.97) type = 'OPERATION_TYPE_INPUT_SECURITIES';
      else if (r < 0.985) type = 'OPERATION_TYPE_BUY_CARD';
      else type = 'OPERATION_TYPE_OVERNIGHT';
      const trade = /BUY|SELL|INPUT_SECURITIES/.test(type);
      const withInstrument = trade || /DIVIDEND|COUPON|BOND_REPAYMENT/.test(type);
      const s = rand();
      const state =
        s < 0.9 ? 'OPERATION_STATE_EXECUTED' : s < 0.96 ? 'OPERATION_STATE_CANCELED' : 'OPERATION_STATE_PROGRESS';
      const quantity = trade ? BigInt(inst.lot * (1 + Math.floor(rand() * 20))) : 0n;
      // Prices vary by a few percent around the instrument's price, to the kopeck.
      const price = trade
        ? ((inst.price * BigInt(9500 + Math.floor(rand() * 1000))) / 10_000n / 10_000_000n) * 10_000_000n
        : 0n;
      const cash = BigInt(Math.floor(rand() * 5_000_000)) * 10_000_000n; // up to 50,000.00
      const currency = withInstrument ? inst.currency : pick(['rub', 'rub', 'rub', 'usd', 'cny']);
      const sign = /BUY|FEE|TAX|OUTPUT/.test(type) ? -1n : 1n;
      const amount = trade ? price * quantity : type.includes('FEE') || type.includes('TAX') ? cash / 100n : cash;
      ops.push({
        cursor: '',
        brokerAccountId: account.id,
        id: String(300_000_000 + ai * 10_000_000 + i * 7),
        parentOperationId:
          type === 'OPERATION_TYPE_BROKER_FEE' ? String(300_000_000 + ai * 10_000_000 + Math.max(0, i - 1) * 7) : '',
        name: withInstrument ? inst.name : '',
        date,
        type,
        description: DESCRIPTIONS[type] ?? '',
        state,
        instrumentUid: withInstrument ? inst.uid : '',
        figi: withInstrument ? inst.figi : '',
        instrumentType: withInstrument ? inst.instrumentType : '',
        instrumentKind: withInstrument ? inst.instrumentKind : 'INSTRUMENT_TYPE_UNSPECIFIED',
        positionUid: withInstrument ? `pos-${inst.uid}` : '',
        payment: moneyValue(currency, sign * amount),
        price: moneyValue(currency, price),
        commission: moneyValue(currency, trade ? -(amount / 1000n / 10_000_000n) * 10_000_000n : 0n),
        quantity: quantity.toString(),
        quantityRest: state === 'OPERATION_STATE_PROGRESS' ? (quantity / 2n).toString() : '0',
        quantityDone:
          state === 'OPERATION_STATE_PROGRESS' ? (quantity - quantity / 2n).toString() : quantity.toString(),
      });
      if (ai === 0 && i % 100 === 42)
        Object.assign(ops[ops.length - 1], { type: LATER_OPERATION_TYPE, description: '' });
    }
  });
  // Newest first, as T-Bank answers.
  return ops.sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0));
}

export const OPERATIONS: WireOperation[] = generateOperations();

/** Positions per open account: every instrument but one, with exact quantities. */
export function portfolioOf(accountId: string) {
  const index = ACCOUNTS.findIndex((a) => a.id === accountId);
  const held = INSTRUMENTS.filter((_, i) => (i + index) % 4 !== 0);
  const positions = held.map((inst, i) => {
    const qty =
      inst.instrumentType === 'currency' ? BigInt(1000 + i * 137) * N + 250_000_000n : BigInt(inst.lot * (3 + i)) * N;
    return {
      figi: inst.figi,
      instrumentType: inst.instrumentType,
      quantity: quotationOf(qty),
      averagePositionPrice: moneyValue(inst.currency, (inst.price * 97n) / 100n),
      expectedYield: quotationOf(((qty / N) * inst.price * 3n) / 100n),
      currentPrice: moneyValue(inst.currency, inst.price),
      quantityLots: quotationOf(qty / BigInt(inst.lot)),
      instrumentUid: inst.uid,
      positionUid: `pos-${inst.uid}`,
      ticker: inst.ticker,
      classCode: inst.classCode,
    };
  });
  const total = held.reduce((sum, inst, i) => sum + inst.price * BigInt(inst.lot * (3 + i)), 0n);
  return {
    totalAmountShares: moneyValue('rub', total / 2n),
    totalAmountPortfolio: moneyValue('rub', total),
    expectedYield: quotationOf(-1_250_000_000n),
    positions,
    accountId,
  };
}

/** Dividends of shares and ETFs, coupons of bonds: quarterly from 2025-03 to 2027-03. */
export function dividendsOf(inst: WireInstrument) {
  if (inst.instrumentType !== 'share' && inst.instrumentType !== 'etf') return [];
  return [0, 3, 6, 9, 12, 15, 18, 21, 24].map((m) => {
    const pay = new Date(Date.UTC(2025, 2 + m, 20)).toISOString();
    return {
      dividendNet: moneyValue(inst.currency, (inst.price / 40n / 10_000_000n) * 10_000_000n),
      paymentDate: pay,
      declaredDate: new Date(Date.UTC(2025, 1 + m, 1)).toISOString(),
      lastBuyDate: new Date(Date.UTC(2025, 2 + m, 5)).toISOString(),
      dividendType: 'Regular Cash',
      recordDate: new Date(Date.UTC(2025, 2 + m, 6)).toISOString(),
      regularity: 'Quarterly',
      closePrice: moneyValue(inst.currency, inst.price),
      yieldValue: quotationOf(2_500_000_000n),
      createdAt: new Date(Date.UTC(2025, 1 + m, 1, 12)).toISOString(),
    };
  });
}

export function bondEventsOf(inst: WireInstrument) {
  if (inst.instrumentType !== 'bond') return [];
  return [0, 6, 12, 18, 24].map((m, i) => ({
    instrumentId: inst.uid,
    eventNumber: i + 1,
    eventDate: new Date(Date.UTC(2025, 4 + m, 15)).toISOString(),
    eventType: 'EVENT_TYPE_CPN',
    fixDate: new Date(Date.UTC(2025, 4 + m, 14)).toISOString(),
    payDate: new Date(Date.UTC(2025, 4 + m, 15)).toISOString(),
    payOneBond: moneyValue('rub', 35_400_000_000n),
    couponInterestRate: quotationOf(7_100_000_000n),
    note: 'Купон',
  }));
}
