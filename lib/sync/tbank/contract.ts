import { MoneyError } from '../errors';
import { Decimal, Money, optionalMoney, optionalQuotation, quotation } from '../money';
import { ContractError } from './errors';

/**
 * The T-Bank Invest API answers the sync reads, parsed into named, validated
 * fields (release 1.43 of the public contract). Nothing else of an answer is
 * kept: an upstream object never reaches storage as it came. Enums are
 * checked against the documented values; T-Bank adds values between releases
 * (operation types above all), so an unknown value shaped like an enum name is
 * kept raw and reported to the `Unknown` sink (counted on the step row); only
 * a value that is not an enum name at all is a ContractError.
 */

/** Told of every unknown enum value an answer carried: `field` is the wire name, `value` the raw value. */
export type Unknown = (field: string, value: string) => void;
const ENUM_NAME = /^[A-Z][A-Z0-9_]{0,99}$/;

export const SERVICES = ['UsersService', 'OperationsService', 'InstrumentsService'] as const;
export type TBankService = (typeof SERVICES)[number];

const enumOf = <T extends string>(...values: T[]) => new Set<string>(values);
export const ACCOUNT_TYPES = enumOf(
  'ACCOUNT_TYPE_UNSPECIFIED',
  'ACCOUNT_TYPE_TINKOFF',
  'ACCOUNT_TYPE_TINKOFF_IIS',
  'ACCOUNT_TYPE_INVEST_BOX',
  'ACCOUNT_TYPE_INVEST_FUND',
  'ACCOUNT_TYPE_DEBIT',
  'ACCOUNT_TYPE_SAVING',
);
export const ACCOUNT_STATUSES = enumOf(
  'ACCOUNT_STATUS_UNSPECIFIED',
  'ACCOUNT_STATUS_NEW',
  'ACCOUNT_STATUS_OPEN',
  'ACCOUNT_STATUS_CLOSED',
  'ACCOUNT_STATUS_ALL',
);
export const ACCESS_LEVELS = enumOf(
  'ACCOUNT_ACCESS_LEVEL_UNSPECIFIED',
  'ACCOUNT_ACCESS_LEVEL_FULL_ACCESS',
  'ACCOUNT_ACCESS_LEVEL_READ_ONLY',
  'ACCOUNT_ACCESS_LEVEL_NO_ACCESS',
);
export const OPERATION_STATES = enumOf(
  'OPERATION_STATE_UNSPECIFIED',
  'OPERATION_STATE_EXECUTED',
  'OPERATION_STATE_CANCELED',
  'OPERATION_STATE_PROGRESS',
);
export const INSTRUMENT_KINDS = enumOf(
  ...(
    [
      'UNSPECIFIED',
      'BOND',
      'SHARE',
      'CURRENCY',
      'ETF',
      'FUTURES',
      'SP',
      'OPTION',
      'CLEARING_CERTIFICATE',
      'INDEX',
      'COMMODITY',
    ] as const
  ).map((v) => `INSTRUMENT_TYPE_${v}`),
);
export const BOND_EVENT_TYPES = enumOf(
  'EVENT_TYPE_UNSPECIFIED',
  'EVENT_TYPE_CPN',
  'EVENT_TYPE_CALL',
  'EVENT_TYPE_MTY',
  'EVENT_TYPE_CONV',
);
export const OPERATION_TYPES = enumOf(
  ...`UNSPECIFIED INPUT BOND_TAX OUTPUT_SECURITIES OVERNIGHT TAX BOND_REPAYMENT_FULL SELL_CARD DIVIDEND_TAX OUTPUT BOND_REPAYMENT
TAX_CORRECTION SERVICE_FEE BENEFIT_TAX MARGIN_FEE BUY BUY_CARD INPUT_SECURITIES SELL_MARGIN BROKER_FEE BUY_MARGIN DIVIDEND SELL COUPON
SUCCESS_FEE DIVIDEND_TRANSFER ACCRUING_VARMARGIN WRITING_OFF_VARMARGIN DELIVERY_BUY DELIVERY_SELL TRACK_MFEE TRACK_PFEE TAX_PROGRESSIVE
BOND_TAX_PROGRESSIVE DIVIDEND_TAX_PROGRESSIVE BENEFIT_TAX_PROGRESSIVE TAX_CORRECTION_PROGRESSIVE TAX_REPO_PROGRESSIVE TAX_REPO TAX_REPO_HOLD
TAX_REPO_REFUND TAX_REPO_HOLD_PROGRESSIVE TAX_REPO_REFUND_PROGRESSIVE DIV_EXT TAX_CORRECTION_COUPON CASH_FEE OUT_FEE OUT_STAMP_DUTY
OUTPUT_SWIFT INPUT_SWIFT OUTPUT_ACQUIRING INPUT_ACQUIRING OUTPUT_PENALTY ADVICE_FEE TRANS_IIS_BS TRANS_BS_BS OUT_MULTI INP_MULTI
OVER_PLACEMENT OVER_COM OVER_INCOME OPTION_EXPIRATION FUTURE_EXPIRATION`
    .split(/\s+/)
    .map((v) => `OPERATION_TYPE_${v}`),
);

export interface Account {
  id: string;
  type: string;
  name: string;
  status: string;
  access_level: string;
  opened_date?: string;
  closed_date?: string;
}
export interface Position {
  figi: string;
  instrument_uid: string;
  instrument_type: string;
  ticker?: string;
  class_code?: string;
  quantity: Decimal;
  average_position_price?: Money;
  current_price?: Money;
  /** The position's yield as T-Bank computes it, in its currency. */
  expected_yield?: Decimal;
}
export interface Portfolio {
  account_id: string;
  total_amount_portfolio?: Money;
  expected_yield?: Decimal;
  positions: Position[];
}
export interface Operation {
  id: string;
  parent_operation_id?: string;
  account_id: string;
  date: string;
  type: string;
  state: string;
  name?: string;
  description?: string;
  instrument_uid?: string;
  figi?: string;
  instrument_type?: string;
  instrument_kind?: string;
  payment?: Money;
  price?: Money;
  commission?: Money;
  accrued_int?: Money;
  quantity?: string;
  quantity_rest?: string;
  quantity_done?: string;
}
export interface OperationsPage {
  has_next: boolean;
  next_cursor: string;
  items: Operation[];
}
export interface Dividend {
  dividend_net?: Money;
  payment_date?: string;
  declared_date?: string;
  last_buy_date?: string;
  record_date?: string;
  dividend_type?: string;
  regularity?: string;
  yield_value?: Decimal;
}
export interface BondEvent {
  instrument_id: string;
  event_number: number;
  event_date?: string;
  event_type: string;
  /** The date the holders entitled to the payment are fixed (the coupon's record date). */
  fix_date?: string;
  pay_date?: string;
  pay_one_bond?: Money;
  coupon_interest_rate?: Decimal;
}
export interface Instrument {
  figi: string;
  uid: string;
  ticker?: string;
  class_code?: string;
  isin?: string;
  name: string;
  currency?: string;
  lot?: number;
  instrument_type?: string;
  instrument_kind?: string;
}

// --- field readers: each names the field it refuses --------------------------

type Obj = Record<string, unknown>;

function obj(value: unknown, what: string): Obj {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ContractError(`${what}: not an object`);
  return value as Obj;
}
function list(value: unknown, what: string): unknown[] {
  if (value === undefined) return []; // proto3 JSON omits empty repeated fields
  if (!Array.isArray(value)) throw new ContractError(`${what}: not a list`);
  return value;
}
const MAX_TEXT = 1024;
function text(o: Obj, field: string, what: string, required = false): string | undefined {
  const value = o[field];
  if (value === undefined || value === null || value === '') {
    if (required) throw new ContractError(`${what}.${field}: missing`);
    return undefined;
  }
  if (typeof value !== 'string' || value.length > MAX_TEXT)
    throw new ContractError(`${what}.${field}: not a string of at most ${MAX_TEXT} characters`);
  return value;
}
const required = (o: Obj, field: string, what: string) => text(o, field, what, true)!;
function enumField(
  o: Obj,
  field: string,
  values: Set<string>,
  what: string,
  unknown: Unknown | undefined,
  fallback?: string,
): string {
  const value = o[field] ?? fallback;
  if (typeof value === 'string' && values.has(value)) return value;
  if (unknown && typeof value === 'string' && ENUM_NAME.test(value)) {
    unknown(field, value);
    return value;
  }
  throw new ContractError(`${what}.${field}: unknown value ${JSON.stringify(value)}`.slice(0, 300));
}
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
function timestamp(o: Obj, field: string, what: string, isRequired = false): string | undefined {
  const value = text(o, field, what, isRequired);
  if (value === undefined) return undefined;
  if (!TIMESTAMP.test(value) || Number.isNaN(Date.parse(value)))
    throw new ContractError(`${what}.${field}: not an RFC 3339 time`);
  return new Date(value).toISOString();
}
function int64Text(o: Obj, field: string, what: string): string | undefined {
  const value = o[field];
  if (value === undefined) return undefined;
  const s = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof s !== 'string' || !/^-?\d{1,19}$/.test(s)) throw new ContractError(`${what}.${field}: not an int64`);
  return s;
}
function wrapMoney<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof MoneyError) throw new ContractError(err.message);
    throw err;
  }
}
const moneyField = (o: Obj, field: string, what: string) =>
  wrapMoney(() => optionalMoney(o[field], `${what}.${field}`));
const quotationField = (o: Obj, field: string, what: string) =>
  wrapMoney(() => optionalQuotation(o[field], `${what}.${field}`));

// --- answers ------------------------------------------------------------------

export function parseAccounts(body: unknown, unknown?: Unknown): Account[] {
  return list(obj(body, 'GetAccounts').accounts, 'GetAccounts.accounts').map((raw, i) => {
    const o = obj(raw, `accounts[${i}]`);
    const what = `accounts[${i}]`;
    return {
      id: required(o, 'id', what),
      type: enumField(o, 'type', ACCOUNT_TYPES, what, unknown, 'ACCOUNT_TYPE_UNSPECIFIED'),
      name: text(o, 'name', what) ?? '',
      status: enumField(o, 'status', ACCOUNT_STATUSES, what, unknown, 'ACCOUNT_STATUS_UNSPECIFIED'),
      access_level: enumField(o, 'accessLevel', ACCESS_LEVELS, what, unknown, 'ACCOUNT_ACCESS_LEVEL_UNSPECIFIED'),
      opened_date: timestamp(o, 'openedDate', what),
      closed_date: timestamp(o, 'closedDate', what),
    };
  });
}

export function parsePortfolio(body: unknown, accountId: string): Portfolio {
  const o = obj(body, 'GetPortfolio');
  return {
    account_id: accountId,
    total_amount_portfolio: moneyField(o, 'totalAmountPortfolio', 'GetPortfolio'),
    expected_yield: quotationField(o, 'expectedYield', 'GetPortfolio'),
    positions: list(o.positions, 'GetPortfolio.positions').map((raw, i) => {
      const what = `positions[${i}]`;
      const p = obj(raw, what);
      return {
        figi: required(p, 'figi', what),
        instrument_uid: required(p, 'instrumentUid', what),
        instrument_type: required(p, 'instrumentType', what),
        ticker: text(p, 'ticker', what),
        class_code: text(p, 'classCode', what),
        quantity: wrapMoney(() => quotation(p.quantity ?? {}, `${what}.quantity`)),
        average_position_price: moneyField(p, 'averagePositionPrice', what),
        current_price: moneyField(p, 'currentPrice', what),
        expected_yield: quotationField(p, 'expectedYield', what),
      };
    }),
  };
}

export function parseOperationsPage(body: unknown, accountId: string, unknown?: Unknown): OperationsPage {
  const o = obj(body, 'GetOperationsByCursor');
  if (o.hasNext !== undefined && typeof o.hasNext !== 'boolean')
    throw new ContractError('GetOperationsByCursor.hasNext: not a boolean');
  const hasNext = o.hasNext === true;
  const nextCursor = text(o, 'nextCursor', 'GetOperationsByCursor') ?? '';
  if (hasNext && !nextCursor) throw new ContractError('GetOperationsByCursor: hasNext without a nextCursor');
  return {
    has_next: hasNext,
    next_cursor: nextCursor,
    items: list(o.items, 'GetOperationsByCursor.items').map((raw, i) => {
      const what = `items[${i}]`;
      const op = obj(raw, what);
      const account = text(op, 'brokerAccountId', what);
      if (account !== undefined && account !== accountId)
        throw new ContractError(`${what}.brokerAccountId: another account's operation`);
      return {
        id: required(op, 'id', what),
        parent_operation_id: text(op, 'parentOperationId', what),
        account_id: accountId,
        date: timestamp(op, 'date', what, true)!,
        type: enumField(op, 'type', OPERATION_TYPES, what, unknown, 'OPERATION_TYPE_UNSPECIFIED'),
        state: enumField(op, 'state', OPERATION_STATES, what, unknown, 'OPERATION_STATE_UNSPECIFIED'),
        name: text(op, 'name', what),
        description: text(op, 'description', what),
        instrument_uid: text(op, 'instrumentUid', what),
        figi: text(op, 'figi', what),
        instrument_type: text(op, 'instrumentType', what),
        instrument_kind:
          op.instrumentKind === undefined
            ? undefined
            : enumField(op, 'instrumentKind', INSTRUMENT_KINDS, what, unknown),
        payment: moneyField(op, 'payment', what),
        price: moneyField(op, 'price', what),
        commission: moneyField(op, 'commission', what),
        accrued_int: moneyField(op, 'accruedInt', what),
        quantity: int64Text(op, 'quantity', what),
        quantity_rest: int64Text(op, 'quantityRest', what),
        quantity_done: int64Text(op, 'quantityDone', what),
      };
    }),
  };
}

export function parseDividends(body: unknown): Dividend[] {
  return list(obj(body, 'GetDividends').dividends, 'GetDividends.dividends').map((raw, i) => {
    const what = `dividends[${i}]`;
    const d = obj(raw, what);
    return {
      dividend_net: moneyField(d, 'dividendNet', what),
      payment_date: timestamp(d, 'paymentDate', what),
      declared_date: timestamp(d, 'declaredDate', what),
      last_buy_date: timestamp(d, 'lastBuyDate', what),
      record_date: timestamp(d, 'recordDate', what),
      dividend_type: text(d, 'dividendType', what),
      regularity: text(d, 'regularity', what),
      yield_value: quotationField(d, 'yieldValue', what),
    };
  });
}

export function parseBondEvents(body: unknown, unknown?: Unknown): BondEvent[] {
  return list(obj(body, 'GetBondEvents').events, 'GetBondEvents.events').map((raw, i) => {
    const what = `events[${i}]`;
    const e = obj(raw, what);
    const number = e.eventNumber ?? 0;
    if (typeof number !== 'number' || !Number.isSafeInteger(number))
      throw new ContractError(`${what}.eventNumber: not an integer`);
    return {
      instrument_id: required(e, 'instrumentId', what),
      event_number: number,
      event_date: timestamp(e, 'eventDate', what),
      event_type: enumField(e, 'eventType', BOND_EVENT_TYPES, what, unknown, 'EVENT_TYPE_UNSPECIFIED'),
      fix_date: timestamp(e, 'fixDate', what),
      pay_date: timestamp(e, 'payDate', what),
      pay_one_bond: moneyField(e, 'payOneBond', what),
      coupon_interest_rate: quotationField(e, 'couponInterestRate', what),
    };
  });
}

export function parseInstrument(body: unknown, unknown?: Unknown): Instrument {
  const i = obj(obj(body, 'GetInstrumentBy').instrument, 'GetInstrumentBy.instrument');
  const what = 'instrument';
  const lot = i.lot ?? 0;
  if (typeof lot !== 'number' || !Number.isSafeInteger(lot)) throw new ContractError(`${what}.lot: not an integer`);
  return {
    figi: required(i, 'figi', what),
    uid: required(i, 'uid', what),
    ticker: text(i, 'ticker', what),
    class_code: text(i, 'classCode', what),
    isin: text(i, 'isin', what),
    name: text(i, 'name', what) ?? '',
    currency: text(i, 'currency', what),
    lot,
    instrument_type: text(i, 'instrumentType', what),
    instrument_kind:
      i.instrumentKind === undefined ? undefined : enumField(i, 'instrumentKind', INSTRUMENT_KINDS, what, unknown),
  };
}
