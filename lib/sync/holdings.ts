import { isoTime } from '../clock';
import type { StoredAccount, StoredEvents, StoredPortfolio } from './holdings-store';
import type { HourlyHead } from './model';
import { type Decimal, type Money, multiplyDecimals } from './money';
import type { Instrument } from './tbank/contract';
import { hourlyCode } from './views';

/**
 * The holdings' read shapes (`GET /sync/{user}/portfolio`, `/calendar`, the
 * exports, the feed, the console): pure functions of the stored items. Money
 * stays `{currency, value}` with an exact decimal string; an expected payment
 * is the per-unit amount times the quantity held, multiplied exactly (up to 18
 * fractional digits: money.ts), never through a float.
 */

/** Where a portfolio stands: its last successful sync, and the newer settled attempt that did not refresh it. */
export interface Freshness {
  synced_at: string;
  refresh_failed: boolean;
  failed_attempt: { attempt_id: string; started_at: string; state: string; error_code: string | null } | null;
}

export interface PositionView {
  instrument_uid: string;
  figi: string;
  ticker: string | null;
  class_code: string | null;
  name: string | null;
  instrument_type: string;
  currency: string | null;
  quantity: Decimal;
  average_position_price: Money | null;
  current_price: Money | null;
  expected_yield: Decimal | null;
}

export interface AccountHoldings extends Freshness {
  account_id: string;
  name: string | null;
  status: string | null;
  total_amount_portfolio: Money | null;
  expected_yield: Decimal | null;
  positions: PositionView[];
}

/**
 * Freshness of one account's portfolio: the newest SETTLED attempt that started
 * after the portfolio was stored did not rewrite it (its portfolio step failed,
 * skipped the account, or never ran), so what is shown is older than it. The
 * attempt that wrote it started before it, and a running one has not settled.
 */
export function freshness(syncedAt: number, attempts: readonly HourlyHead[]): Freshness {
  const settled = attempts.filter((a) => a.state !== 'running').sort((a, b) => b.started_at - a.started_at)[0];
  const failed = settled && settled.started_at > syncedAt ? settled : undefined;
  const section = failed?.sections?.portfolio;
  return {
    synced_at: isoTime(syncedAt),
    refresh_failed: !!failed,
    failed_attempt: failed
      ? {
          attempt_id: failed.attempt_id,
          started_at: isoTime(failed.started_at),
          state: failed.state,
          // The section's own code (null when it succeeded but skipped this account); else the attempt's.
          error_code:
            section?.state === 'succeeded' ? null : hourlyCode(section?.error_code ?? failed.error_code ?? undefined),
        }
      : null,
  };
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function portfolioView(input: {
  portfolios: readonly StoredPortfolio[];
  accounts: readonly StoredAccount[];
  instruments: ReadonlyMap<string, Instrument>;
  attempts: readonly HourlyHead[];
}): { accounts: AccountHoldings[] } {
  const accounts = new Map(input.accounts.map((a) => [a.id, a]));
  return {
    accounts: [...input.portfolios]
      .sort((a, b) => byText(a.account_id, b.account_id))
      .map((p) => ({
        account_id: p.account_id,
        name: accounts.get(p.account_id)?.name || null,
        status: accounts.get(p.account_id)?.status ?? null,
        ...freshness(p.synced_at, input.attempts),
        total_amount_portfolio: p.total_amount_portfolio ?? null,
        expected_yield: p.expected_yield ?? null,
        positions: p.positions
          .map((pos): PositionView => {
            const i = input.instruments.get(pos.instrument_uid);
            return {
              instrument_uid: pos.instrument_uid,
              figi: pos.figi,
              ticker: pos.ticker ?? i?.ticker ?? null,
              class_code: pos.class_code ?? i?.class_code ?? null,
              name: i?.name || null,
              instrument_type: pos.instrument_type,
              currency: i?.currency ?? pos.current_price?.currency ?? pos.average_position_price?.currency ?? null,
              quantity: pos.quantity,
              average_position_price: pos.average_position_price ?? null,
              current_price: pos.current_price ?? null,
              expected_yield: pos.expected_yield ?? null,
            };
          })
          .sort((a, b) => byText(a.ticker ?? a.instrument_uid, b.ticker ?? b.instrument_uid)),
      })),
  };
}

/** The payments the calendar lists: dividends, and of a bond's events its coupons and its redemption at maturity. */
export const PAYMENT_KINDS = ['dividend', 'coupon', 'maturity'] as const;
export type PaymentKind = (typeof PAYMENT_KINDS)[number];
const BOND_KIND: Readonly<Record<string, PaymentKind>> = { EVENT_TYPE_CPN: 'coupon', EVENT_TYPE_MTY: 'maturity' };

export interface CalendarEntry {
  kind: PaymentKind;
  account_id: string;
  instrument_uid: string;
  figi: string;
  ticker: string | null;
  name: string | null;
  instrument_type: string;
  /** YYYY-MM-DD: the register's closing date (a dividend's record date, a coupon's fixing date). */
  record_date: string | null;
  /** YYYY-MM-DD: the date the calendar sorts and filters by. */
  payment_date: string;
  amount_per_unit: Money | null;
  quantity: Decimal;
  /** amount_per_unit × quantity, exact; null while the amount is not announced. */
  expected_amount: { currency: string; value: string } | null;
}

export interface CalendarView {
  /** Which of an entry's dates `from`/`to` filter (both days included), and the range asked for. */
  filter: { date: 'payment_date'; from: string | null; to: string | null };
  items: CalendarEntry[];
  /** Events of held instruments without a payment date yet: they cannot be placed on a calendar. */
  without_payment_date: number;
}

/** T-Bank sends calendar dates as midnight-UTC timestamps: the UTC date, never shifted into a time zone. */
const dateOf = (iso: string | undefined): string | null =>
  iso && /^\d{4}-\d{2}-\d{2}T/.test(iso) ? iso.slice(0, 10) : null;

/**
 * The payments of the instruments the user holds NOW (an instrument sold since
 * drops out with its position), one entry per account holding it, sorted by
 * payment date. `from`/`to` are YYYY-MM-DD on the payment date.
 */
export function calendarView(input: {
  portfolios: readonly StoredPortfolio[];
  events: readonly StoredEvents[];
  instruments: ReadonlyMap<string, Instrument>;
  from?: string;
  to?: string;
}): CalendarView {
  const events = new Map(input.events.map((e) => [e.instrument_uid, e]));
  const items: CalendarEntry[] = [];
  let undated = 0;
  for (const p of input.portfolios)
    for (const pos of p.positions) {
      const e = events.get(pos.instrument_uid);
      if (!e) continue;
      const i = input.instruments.get(pos.instrument_uid);
      const payments = [
        ...e.dividends.map((d) => ({
          kind: 'dividend' as PaymentKind,
          record: d.record_date,
          pay: d.payment_date,
          amount: d.dividend_net,
        })),
        ...e.bond_events
          .filter((b) => BOND_KIND[b.event_type])
          .map((b) => ({ kind: BOND_KIND[b.event_type], record: b.fix_date, pay: b.pay_date, amount: b.pay_one_bond })),
      ];
      for (const pay of payments) {
        const payment_date = dateOf(pay.pay);
        if (!payment_date) {
          undated++;
          continue;
        }
        if ((input.from && payment_date < input.from) || (input.to && payment_date > input.to)) continue;
        items.push({
          kind: pay.kind,
          account_id: p.account_id,
          instrument_uid: pos.instrument_uid,
          figi: pos.figi,
          ticker: pos.ticker ?? i?.ticker ?? null,
          name: i?.name || null,
          instrument_type: pos.instrument_type,
          record_date: dateOf(pay.record),
          payment_date,
          amount_per_unit: pay.amount ?? null,
          quantity: pos.quantity,
          expected_amount: pay.amount
            ? { currency: pay.amount.currency, value: multiplyDecimals(pay.amount.value, pos.quantity) }
            : null,
        });
      }
    }
  items.sort(
    (a, b) =>
      byText(a.payment_date, b.payment_date) ||
      byText(a.ticker ?? a.instrument_uid, b.ticker ?? b.instrument_uid) ||
      byText(a.account_id, b.account_id) ||
      byText(a.kind, b.kind),
  );
  return {
    filter: { date: 'payment_date', from: input.from ?? null, to: input.to ?? null },
    items,
    without_payment_date: undated,
  };
}
