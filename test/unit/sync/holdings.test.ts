import { parse } from 'csv-parse/sync';
import ICAL from 'ical.js';
import { calendarView, freshness, portfolioView } from '../../../lib/sync/holdings';
import { calendarCsv, positionsCsv } from '../../../lib/sync/exports';
import { calendarFeed, feedWords } from '../../../lib/sync/ical';
import { exactAtoms, multiplyDecimals, sumExact } from '../../../lib/sync/money';
import { SyncErrorCode } from '../../../lib/sync/model';
import {
  attempt,
  nanosOf,
  storedFixture,
  SYNCED_AT,
  UID,
  USER,
  WIRE_BOND_EVENTS,
  WIRE_DIVIDENDS,
  WIRE_PORTFOLIOS,
} from '../../support/holdings-fixture';

/** The holdings' views over a fixture parsed from T-Bank's wire form: exact money end to end, freshness, the calendar's rules. */

const HOUR = 3600_000;
const fixture = storedFixture();
const view = () => portfolioView({ ...fixture, attempts: [] });
const calendar = (range: { from?: string; to?: string } = {}) => calendarView({ ...fixture, ...range });

type Wire = { units: string; nano: number; currency?: string };
const atoms = (m: Wire) => nanosOf(m) * 1_000_000_000n; // nanos → 1e-18 atoms
/** The exact value of a decimal string as 1e-18 atoms (from any of the outputs: JSON, CSV's point or comma). */
const parsed = (text: string) => exactAtoms(text.replace(',', '.'));

describe('the portfolio view', () => {
  it('shows each account as stored, with catalog names and exact money', () => {
    const v = view();
    expect(v.accounts.map((a) => [a.account_id, a.name, a.refresh_failed])).toEqual([
      ['2000000001', 'Брокерский счёт', false],
      ['2000000002', 'ИИС', false],
    ]);
    const sber = v.accounts[0].positions.find((p) => p.ticker === 'SBER')!;
    expect(sber).toEqual({
      instrument_uid: UID.sber,
      figi: 'BBG004730N88',
      ticker: 'SBER',
      class_code: 'TQBR',
      name: 'Сбер Банк',
      instrument_type: 'share',
      currency: 'rub',
      quantity: '130',
      average_position_price: { currency: 'rub', value: '280.15' },
      current_price: { currency: 'rub', value: '301.2' },
      expected_yield: '2737.5',
    });
    expect(v.accounts[0].synced_at).toBe(new Date(SYNCED_AT).toISOString());
    expect(v.accounts[1].positions.find((p) => p.instrument_uid === UID.frac)!.quantity).toBe('0.500000001');
  });

  it('says a later settled attempt failed to refresh it; the attempt that wrote it or a running one does not', () => {
    const before = attempt('a-before', SYNCED_AT - 30_000);
    expect(freshness(SYNCED_AT, [before])).toMatchObject({ refresh_failed: false, failed_attempt: null });
    const running = attempt('a-running', SYNCED_AT + HOUR, { state: 'running' });
    expect(freshness(SYNCED_AT, [running, before]).refresh_failed).toBe(false);
    const failed = attempt('a-failed', SYNCED_AT + HOUR, {
      state: 'partial',
      error_code: SyncErrorCode.DISPATCH_FAILED,
      sections: { portfolio: { state: 'failed', error_code: SyncErrorCode.DISPATCH_FAILED } },
    });
    // The read's vocabulary: a lifecycle word the design does not name reads INTERNAL (views.ts).
    expect(freshness(SYNCED_AT, [running, failed, before])).toEqual({
      synced_at: new Date(SYNCED_AT).toISOString(),
      refresh_failed: true,
      failed_attempt: {
        attempt_id: 'a-failed',
        started_at: new Date(SYNCED_AT + HOUR).toISOString(),
        state: 'partial',
        error_code: 'INTERNAL',
      },
    });
    // Its portfolio step succeeded yet skipped this account (50004, 40002): not refreshed, no code of its own.
    const skipped = attempt('a-skip', SYNCED_AT + HOUR, {
      state: 'succeeded',
      sections: { portfolio: { state: 'succeeded' } },
    });
    expect(freshness(SYNCED_AT, [skipped]).failed_attempt).toMatchObject({ attempt_id: 'a-skip', error_code: null });
    const v = portfolioView({ ...fixture, attempts: [failed] });
    expect(v.accounts.every((a) => a.refresh_failed)).toBe(true);
    // The last good positions stay shown.
    expect(v.accounts[0].positions).toEqual(view().accounts[0].positions);
  });
});

describe('the calendar view', () => {
  it('lists the payments of the instruments held, per account, by payment date; the filter is on the payment date', () => {
    const c = calendar();
    expect(c.filter).toEqual({ date: 'payment_date', from: null, to: null });
    expect(c.items.map((e) => [e.payment_date, e.kind, e.ticker, e.account_id])).toEqual([
      ['2026-07-20', 'dividend', 'SBER', '2000000001'],
      ['2026-07-20', 'dividend', 'SBER', '2000000002'],
      ['2026-12-15', 'coupon', 'SU26238RMFS4', '2000000001'],
      ['2026-12-20', 'dividend', 'SBER', '2000000001'],
      ['2026-12-20', 'dividend', 'SBER', '2000000002'],
      ['2027-01-05', 'dividend', '=FRAC', '2000000002'],
      ['2027-01-20', 'maturity', 'SU26238RMFS4', '2000000001'],
      ['2027-02-10', 'dividend', 'SBER', '2000000001'],
      ['2027-02-10', 'dividend', 'SBER', '2000000002'],
    ]);
    // The ETF's dividend has no payment date yet: counted, not placed. The offer (CALL) is no payment.
    expect(c.without_payment_date).toBe(1);
    const coupon = c.items[2];
    expect(coupon).toMatchObject({
      record_date: '2026-12-14',
      amount_per_unit: { currency: 'rub', value: '35.4' },
      quantity: '15',
      expected_amount: { currency: 'rub', value: '531' },
    });
    expect(c.items.at(-1)).toMatchObject({ amount_per_unit: null, expected_amount: null });
    const range = calendar({ from: '2026-12-15', to: '2026-12-20' });
    expect(range.filter).toEqual({ date: 'payment_date', from: '2026-12-15', to: '2026-12-20' });
    expect(range.items.map((e) => e.payment_date)).toEqual(['2026-12-15', '2026-12-20', '2026-12-20']);
  });

  it('multiplies exactly: 0.333333333 × 0.500000001 has 18 fractional digits and keeps them', () => {
    const frac = calendar().items.find((e) => e.instrument_uid === UID.frac)!;
    expect(frac.expected_amount).toEqual({ currency: 'usd', value: '0.166666666833333333' });
    expect(multiplyDecimals('-1.5', '3')).toBe('-4.5');
    // The int64 bound squared, as Python's Decimal (80 digits) computes it.
    expect(multiplyDecimals('9223372036854775807.999999999', '9223372036854775807.999999999')).toBe(
      '85070591730234615865843651839495308790.290448384000000001',
    );
  });

  it('drops an instrument sold since: its events stay stored but no position holds it', () => {
    const sold = {
      ...fixture,
      portfolios: fixture.portfolios.map((p) =>
        p.account_id === '2000000001'
          ? { ...p, positions: p.positions.filter((x) => x.instrument_uid !== UID.sber) }
          : p,
      ),
    };
    const c = calendarView(sold);
    expect(c.items.filter((e) => e.ticker === 'SBER').map((e) => e.account_id)).toEqual([
      '2000000002',
      '2000000002',
      '2000000002',
    ]);
  });
});

describe('money stays exact through every route and export', () => {
  // The expected payments, summed per currency from the wire's units/nano (bigint), quantity by quantity.
  const heldNanos = (uid: string) =>
    Object.values(WIRE_PORTFOLIOS).flatMap((p) =>
      (p as { positions: { instrumentUid: string; quantity: Wire }[] }).positions
        .filter((x) => x.instrumentUid === uid)
        .map((x) => nanosOf(x.quantity)),
    );
  const expectedByCurrency = new Map<string, bigint>();
  const perUnit: Array<[string, Wire]> = [
    ...Object.entries(WIRE_DIVIDENDS).flatMap(([uid, body]) =>
      (body as { dividends: { dividendNet?: Wire; paymentDate?: string }[] }).dividends
        .filter((d) => d.dividendNet && d.paymentDate)
        .map((d) => [uid, d.dividendNet!] as [string, Wire]),
    ),
    ...WIRE_BOND_EVENTS.events
      .filter((e) => e.payOneBond && e.eventType !== 'EVENT_TYPE_CALL')
      .map((e) => [e.instrumentId, e.payOneBond!] as [string, Wire]),
  ];
  for (const [uid, amount] of perUnit)
    for (const qty of heldNanos(uid))
      expectedByCurrency.set(
        amount.currency!,
        (expectedByCurrency.get(amount.currency!) ?? 0n) + nanosOf(amount) * qty,
      );
  const prices = Object.values(WIRE_PORTFOLIOS).flatMap((p) =>
    (p as { positions: { averagePositionPrice?: Wire; currentPrice?: Wire }[] }).positions.flatMap((x) => [
      x.averagePositionPrice!,
      x.currentPrice!,
    ]),
  );
  const priceAtoms = prices.reduce((s, m) => s + atoms(m), 0n);
  const sumBy = (rows: Array<{ currency: string; value: string }>) => {
    const out = new Map<string, bigint>();
    for (const r of rows)
      out.set(r.currency.toLowerCase(), (out.get(r.currency.toLowerCase()) ?? 0n) + parsed(r.value));
    return out;
  };

  it('the calendar read', () => {
    const json = JSON.parse(JSON.stringify(calendar())) as ReturnType<typeof calendar>;
    expect(sumBy(json.items.flatMap((e) => e.expected_amount ?? []))).toEqual(expectedByCurrency);
  });

  it.each(['csv', 'excel-ru'] as const)(
    'the calendar and positions exports as %s, read by a strict CSV parser',
    (format) => {
      const delimiter = format === 'csv' ? ',' : ';';
      const read = (text: string) =>
        parse(text, {
          bom: true,
          delimiter,
          columns: true,
          record_delimiter: '\r\n',
          skip_empty_lines: false,
        }) as Record<string, string>[];
      const cal = read(calendarCsv(format, calendar().items));
      const [amount, currency] = format === 'csv' ? ['expected_amount', 'currency'] : ['Ожидается', 'Валюта'];
      expect(sumBy(cal.filter((r) => r[amount]).map((r) => ({ currency: r[currency], value: r[amount] })))).toEqual(
        expectedByCurrency,
      );
      const pos = read(positionsCsv(format, view().accounts));
      const [avg, cur] = format === 'csv' ? ['average_price', 'current_price'] : ['Средняя цена', 'Текущая цена'];
      expect(pos.reduce((s, r) => s + parsed(r[avg]) + parsed(r[cur]), 0n)).toBe(priceAtoms);
    },
  );

  it('the portfolio read', () => {
    const json = JSON.parse(JSON.stringify(view())) as ReturnType<typeof view>;
    const sum = json.accounts
      .flatMap((a) => a.positions)
      .reduce((s, p) => s + parsed(p.average_position_price!.value) + parsed(p.current_price!.value), 0n);
    expect(sum).toBe(priceAtoms);
  });

  it('the iCalendar feed, read by ical.js', () => {
    const text = calendarFeed(calendar().items, { user: USER, now: SYNCED_AT, words: feedWords('en') });
    const events = new ICAL.Component(ICAL.parse(text)).getAllSubcomponents('vevent');
    const rows = events.flatMap((e) => {
      const m = /: (?:dividend|coupon|redemption) (-?[\d.]+) ([A-Z]{3})$/.exec(
        String(e.getFirstPropertyValue('summary')),
      );
      return m ? [{ value: m[1], currency: m[2] }] : [];
    });
    expect(sumBy(rows)).toEqual(expectedByCurrency);
    expect(sumExact(rows.map((r) => r.value))).toBe(
      sumExact(calendar().items.flatMap((e) => e.expected_amount?.value ?? [])),
    );
  });
});
