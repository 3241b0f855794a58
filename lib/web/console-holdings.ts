import { exactNumber } from '../i18n';
import type { AccountHoldings, CalendarEntry, CalendarView } from '../sync/holdings';
import { sumExact } from '../sync/money';
import { amountChart, type AmountBucket } from './charts';
import { cell, tableWrap } from './console-parts';
import { Html, html } from './html';
import type { Ui } from './locale';
import { holdingsMessages } from './messages/holdings';
import { idText, time } from './shell';

/**
 * The sync user page's holdings (GET /sync/{user}): each account's positions as
 * the last successful portfolio step stored them (and whether a later attempt
 * failed to refresh them), then the payments of the next PAYMENT_DAYS days in
 * the configured zone with a chart of the expected amount per month and
 * currency. Amounts are the read API's exact strings, formatted digit for digit.
 */

export const PAYMENT_DAYS = 90;
const DAY = 86_400_000;

export interface HoldingsView {
  accounts: AccountHoldings[];
  calendar: CalendarView;
  /** The payment window, YYYY-MM-DD, both included. */
  from: string;
  to: string;
}

/** The window's days: today in the zone, and PAYMENT_DAYS - 1 days after it (counted on dates, so DST moves nothing). */
export function paymentWindow(now: number, timeZone: string, days = PAYMENT_DAYS): { from: string; to: string } {
  const from = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    now,
  );
  const to = new Date(Date.parse(`${from}T12:00:00Z`) + (days - 1) * DAY).toISOString().slice(0, 10);
  return { from, to };
}

const amount = (ui: Ui, m: { currency: string; value: string } | null | undefined) =>
  m ? `${exactNumber(ui.lang, m.value, 2)} ${m.currency.toUpperCase()}` : undefined;

/** A calendar date as the language writes it (a date, not a moment: no zone applies). */
const dateText = (ui: Ui, day: string) =>
  new Intl.DateTimeFormat(ui.f.locale, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' }).format(
    Date.parse(`${day}T00:00:00Z`),
  );

function instrument(name: string | null, ticker: string | null, fallback: string): Html {
  return html`<strong>${ticker ?? idText(fallback)}</strong>${name ? html` <span class="muted">${name}</span>` : ''}`;
}

function accountSection(ui: Ui, user: string, a: AccountHoldings): Html {
  const m = holdingsMessages(ui.lang);
  const col = m.col;
  const stale = a.failed_attempt
    ? html`<p class="notice" role="status">${m.stale({
        attempt: html`<a href="/sync/${user}?attempt=${a.failed_attempt.attempt_id}" class="mono">${idText(a.failed_attempt.attempt_id)}</a>`,
        at: time(ui, a.failed_attempt.started_at),
        code: a.failed_attempt.error_code,
      })}</p>`
    : '';
  return html`<h3 class="account">${m.accountHeading({ name: a.name, id: idText(a.account_id) })}</h3>
<p class="muted">${m.syncedAt({ at: time(ui, a.synced_at) })}</p>${stale}${
    a.positions.length === 0
      ? html`<p class="empty">${m.emptyAccount}</p>`
      : tableWrap(
          ui,
          html`<table class="list"><caption class="visually-hidden">${m.positionsCaption({ account: a.name ?? a.account_id })}</caption>
<thead><tr><th scope="col">${col.instrument}</th><th scope="col">${col.type}</th><th scope="col" class="num">${col.quantity}</th><th scope="col" class="num">${col.average}</th><th scope="col" class="num">${col.current}</th><th scope="col" class="num">${col.yield}</th></tr></thead>
<tbody>${a.positions.map(
            (p) =>
              html`<tr>${cell(col.instrument, instrument(p.name, p.ticker, p.instrument_uid))}${cell(col.type, m.instrumentType[p.instrument_type] ?? p.instrument_type)}${cell(
                col.quantity,
                exactNumber(ui.lang, p.quantity),
                'num',
              )}${cell(col.average, amount(ui, p.average_position_price) ?? '–', 'num')}${cell(col.current, amount(ui, p.current_price) ?? '–', 'num')}${cell(
                col.yield,
                (p.expected_yield && amount(ui, { currency: p.currency ?? '', value: p.expected_yield })) || '–',
                'num',
              )}</tr>`,
          )}</tbody></table>`,
        )
  }`;
}

/** Expected amounts per month of the window, one series per currency (amounts in different currencies never add up). */
export function monthlyExpected(
  items: readonly CalendarEntry[],
  from: string,
  to: string,
): Array<{ currency: string; months: Array<{ month: string; value: string }> }> {
  const months: string[] = [];
  for (let m = from.slice(0, 7); m <= to.slice(0, 7);) {
    months.push(m);
    const [y, mo] = m.split('-').map(Number);
    m = mo === 12 ? `${y + 1}-01` : `${y}-${String(mo + 1).padStart(2, '0')}`;
  }
  const byCurrency = new Map<string, Map<string, string[]>>();
  for (const e of items) {
    if (!e.expected_amount) continue;
    const perMonth = byCurrency.get(e.expected_amount.currency) ?? new Map<string, string[]>();
    byCurrency.set(e.expected_amount.currency, perMonth);
    const month = e.payment_date.slice(0, 7);
    perMonth.set(month, [...(perMonth.get(month) ?? []), e.expected_amount.value]);
  }
  return [...byCurrency.keys()].sort().map((currency) => ({
    currency,
    months: months.map((month) => ({ month, value: sumExact(byCurrency.get(currency)!.get(month) ?? []) })),
  }));
}

function paymentsSection(ui: Ui, v: HoldingsView): Html {
  const m = holdingsMessages(ui.lang);
  const col = m.pcol;
  const monthLabel = new Intl.DateTimeFormat(ui.f.locale, { month: 'short', timeZone: 'UTC' });
  const charts = monthlyExpected(v.calendar.items, v.from, v.to).map(({ currency, months }) => {
    const cur = currency.toUpperCase();
    const total = sumExact(months.map((x) => x.value));
    const buckets: AmountBucket[] = months.map((x) => ({
      label: monthLabel.format(Date.parse(`${x.month}-01T00:00:00Z`)),
      value: x.value,
    }));
    return amountChart(
      m.chartTitle({ currency: cur }),
      buckets,
      (value) => `${exactNumber(ui.lang, value, 2)} ${cur}`,
      {
        summary: m.chartSummary({ currency: cur, total: exactNumber(ui.lang, total, 2), months: months.length }),
        bucket: m.month,
        amount: m.expected,
      },
    );
  });
  const items = v.calendar.items;
  const accountName = new Map(v.accounts.map((a) => [a.account_id, a.name ?? a.account_id]));
  return html`<section class="card" aria-labelledby="payments"><h2 id="payments">${m.payments({ days: PAYMENT_DAYS })}</h2>
<p class="muted">${m.paymentsIntro({ from: dateText(ui, v.from), to: dateText(ui, v.to) })}</p>
${charts.length ? html`<div class="charts">${charts}</div>` : ''}${
    items.length === 0
      ? html`<p class="empty">${m.noPayments}</p>`
      : tableWrap(
          ui,
          html`<table class="list"><caption class="visually-hidden">${m.paymentsCaption}</caption>
<thead><tr><th scope="col">${col.date}</th><th scope="col">${col.instrument}</th><th scope="col">${col.kind}</th><th scope="col">${col.account}</th><th scope="col" class="num">${col.perUnit}</th><th scope="col" class="num">${col.quantity}</th><th scope="col" class="num">${col.expected}</th><th scope="col">${col.record}</th></tr></thead>
<tbody>${items.map(
            (e) =>
              html`<tr>${cell(col.date, dateText(ui, e.payment_date))}${cell(col.instrument, instrument(e.name, e.ticker, e.instrument_uid))}${cell(col.kind, m.kind[e.kind])}${cell(col.account, accountName.get(e.account_id) ?? e.account_id)}${cell(
                col.perUnit,
                amount(ui, e.amount_per_unit) ?? m.notAnnounced,
                'num',
              )}${cell(col.quantity, exactNumber(ui.lang, e.quantity), 'num')}${cell(
                col.expected,
                amount(ui, e.expected_amount) ?? m.notAnnounced,
                'num',
              )}${cell(col.record, e.record_date ? dateText(ui, e.record_date) : '–')}</tr>`,
          )}</tbody></table>`,
        )
  }</section>`;
}

export function holdingsSections(ui: Ui, user: string, v: HoldingsView): Html {
  const m = holdingsMessages(ui.lang);
  return html`<section class="card" aria-labelledby="positions"><h2 id="positions">${m.positions}</h2>
<p class="muted">${m.positionsIntro}</p>${
    v.accounts.length === 0
      ? html`<p class="empty">${m.noPositions}</p>`
      : v.accounts.map((a) => accountSection(ui, user, a))
  }</section>
${paymentsSection(ui, v)}`;
}
