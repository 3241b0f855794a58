import { FieldSpec, readItem } from '../util/item';
import type { Money } from './money';
import type { Account, BondEvent, Dividend, Instrument, Portfolio, Position } from './tbank/contract';

/**
 * What the read routes and the console show of the synced holdings (views of
 * the items the steps wrote: keys.ts). Items are read back through the same
 * named fields they were written from; nothing else of an item reaches a view.
 */

/** A portfolio as the last successful portfolio step of its account stored it, and when (epoch ms). */
export interface StoredPortfolio extends Portfolio {
  synced_at: number;
}
export interface StoredAccount extends Account {
  synced_at: number;
}
/** A held instrument's dividends or bond events, as the last events step stored them. */
export interface StoredEvents {
  instrument_uid: string;
  dividends: Dividend[];
  bond_events: BondEvent[];
  synced_at: number;
}

export interface HoldingsStore {
  portfolios(user: string): Promise<StoredPortfolio[]>;
  accounts(user: string): Promise<StoredAccount[]>;
  events(user: string): Promise<StoredEvents[]>;
  /** The shared catalog's entries of these instruments (absent: never fetched). */
  instruments(uids: string[]): Promise<Map<string, Instrument>>;
}

const MONEY: FieldSpec<Money> = { currency: 'string', value: 'string' };
const money = (raw: unknown, what: string): Money | undefined =>
  raw === undefined || raw === null ? undefined : readItem(MONEY, raw as Record<string, unknown>, what);

const POSITION: FieldSpec<Position> = {
  figi: 'string',
  instrument_uid: 'string',
  instrument_type: 'string',
  ticker: 'string?',
  class_code: 'string?',
  quantity: 'string',
  average_position_price: 'object?',
  current_price: 'object?',
  expected_yield: 'string?',
};
const PORTFOLIO: FieldSpec<Omit<StoredPortfolio, 'positions'>> = {
  account_id: 'string',
  total_amount_portfolio: 'object?',
  expected_yield: 'string?',
  synced_at: 'number',
};
const ACCOUNT: FieldSpec<StoredAccount> = {
  id: 'string',
  type: 'string',
  name: 'string',
  status: 'string',
  access_level: 'string',
  opened_date: 'string?',
  closed_date: 'string?',
  synced_at: 'number',
};
const DIVIDEND: FieldSpec<Dividend> = {
  dividend_net: 'object?',
  payment_date: 'string?',
  declared_date: 'string?',
  last_buy_date: 'string?',
  record_date: 'string?',
  dividend_type: 'string?',
  regularity: 'string?',
  yield_value: 'string?',
};
const BOND_EVENT: FieldSpec<BondEvent> = {
  instrument_id: 'string',
  event_number: 'number',
  event_date: 'string?',
  event_type: 'string',
  fix_date: 'string?',
  pay_date: 'string?',
  pay_one_bond: 'object?',
  coupon_interest_rate: 'string?',
};
const INSTRUMENT: FieldSpec<Instrument> = {
  figi: 'string',
  uid: 'string',
  ticker: 'string?',
  class_code: 'string?',
  isin: 'string?',
  name: 'string',
  currency: 'string?',
  lot: 'number?',
  instrument_type: 'string?',
  instrument_kind: 'string?',
};

type Item = Record<string, unknown>;
const list = (raw: unknown): Item[] => (Array.isArray(raw) ? (raw as Item[]) : []);

export function portfolioFromItem(item: Item): StoredPortfolio {
  const p = readItem(PORTFOLIO, item, 'portfolio');
  const positions = list(item.positions).map((raw) => {
    const pos = readItem(POSITION, raw, 'position');
    return {
      ...pos,
      average_position_price: money(pos.average_position_price, 'position.average_position_price'),
      current_price: money(pos.current_price, 'position.current_price'),
    };
  });
  return { ...p, total_amount_portfolio: money(p.total_amount_portfolio, 'portfolio.total'), positions };
}

export const accountFromItem = (item: Item): StoredAccount => readItem(ACCOUNT, item, 'account');

export function eventsFromItem(item: Item): StoredEvents {
  return {
    instrument_uid: readItem({ instrument_uid: 'string' }, item, 'events').instrument_uid as string,
    synced_at: typeof item.synced_at === 'number' ? item.synced_at : 0,
    dividends: list(item.dividends).map((raw) => {
      const d = readItem(DIVIDEND, raw, 'dividend');
      return { ...d, dividend_net: money(d.dividend_net, 'dividend.dividend_net') };
    }),
    bond_events: list(item.bond_events).map((raw) => {
      const e = readItem(BOND_EVENT, raw, 'bond event');
      return { ...e, pay_one_bond: money(e.pay_one_bond, 'bond event.pay_one_bond') };
    }),
  };
}

export const instrumentFromItem = (item: Item): Instrument => readItem(INSTRUMENT, item, 'instrument');
