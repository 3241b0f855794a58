import { type Catalogs, catalogue } from '../i18n';
import { wellFormed } from './csv';
import type { CalendarEntry, PaymentKind } from './holdings';

/**
 * The payment calendar as an iCalendar feed (RFC 5545) a phone's calendar
 * subscribes to: one all-day VEVENT per expected payment on its payment date
 * (a date, not a time: the payment happens on that day wherever the phone
 * is), a UID stable across refreshes (so an edit replaces, never duplicates),
 * TEXT escaped, CRLF line ends, lines folded at 75 octets without splitting a
 * UTF-8 character. Amounts are the exact decimal strings of the read API.
 */

export interface FeedWords {
  calendarName: string;
  kind: Record<PaymentKind, string>;
  /** "SBER: dividend 1 234.5 RUB" — the event's title. */
  summary: (p: { instrument: string; kind: string; amount: string | null }) => string;
  /** The event's notes: per unit, quantity, record date, account. */
  description: (p: { perUnit: string | null; quantity: string; record: string | null; account: string }) => string;
}

/** The feed's texts, one catalogue per language (lib/i18n): `feedWords(lang)`. */
const FEED_CATALOGS: Catalogs<FeedWords> = {
  en: {
    calendarName: 'Dividends and coupons',
    kind: { dividend: 'dividend', coupon: 'coupon', maturity: 'redemption' },
    summary: ({ instrument, kind, amount }) => `${instrument}: ${kind}${amount ? ` ${amount}` : ''}`,
    description: ({ perUnit, quantity, record, account }) =>
      [
        `Per unit: ${perUnit ?? 'not announced'}`,
        `Quantity held: ${quantity}`,
        ...(record ? [`Record date: ${record}`] : []),
        `Account: ${account}`,
      ].join('\n'),
  },
  ru: {
    calendarName: 'Дивиденды и купоны',
    kind: { dividend: 'дивиденд', coupon: 'купон', maturity: 'погашение' },
    summary: ({ instrument, kind, amount }) => `${instrument}: ${kind}${amount ? ` ${amount}` : ''}`,
    description: ({ perUnit, quantity, record, account }) =>
      [
        `На одну бумагу: ${perUnit ?? 'не объявлено'}`,
        `В портфеле: ${quantity}`,
        ...(record ? [`Дата фиксации реестра: ${record}`] : []),
        `Счёт: ${account}`,
      ].join('\n'),
  },
};
export const feedWords = catalogue<FeedWords>(FEED_CATALOGS);

/** RFC 5545 §3.3.11: backslash, semicolon, comma escaped; a line break as \n; other controls dropped. */
export function escapeText(text: string): string {
  return wellFormed(text)
    .replace(/[\\;,]/g, (c) => `\\${c}`)
    .replace(/\r\n|\r|\n/g, '\\n')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
}

/** RFC 5545 §3.1: at most 75 octets a line, continued by CRLF and one space; never inside a UTF-8 sequence. */
export function foldLine(line: string): string {
  const out: string[] = [];
  let current = '';
  let bytes = 0;
  for (const ch of line) {
    const size = Buffer.byteLength(ch, 'utf8');
    // The first line holds 75 octets, each continuation 74 after its leading space.
    if (bytes + size > (out.length === 0 ? 75 : 74)) {
      out.push(current);
      current = '';
      bytes = 0;
    }
    current += ch;
    bytes += size;
  }
  out.push(current);
  return out.join('\r\n ');
}

const basicDate = (day: string) => day.replace(/-/g, '');
const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
const stamp = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/** A UID from our own named fields only (ids of the closed key alphabet, a date, a kind): stable, never upstream text. */
const uidOf = (e: CalendarEntry, user: string, n: number) =>
  `${e.kind}-${e.payment_date}-${e.instrument_uid}-${e.account_id}${n > 1 ? `-${n}` : ''}@${user}.sync.torrent-scan-sync`;

export function calendarFeed(
  entries: readonly CalendarEntry[],
  options: { user: string; now: number; words: FeedWords },
): string {
  const w = options.words;
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//torrent-scan-sync//payment calendar//EN',
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
    `X-WR-CALNAME:${escapeText(w.calendarName)}`,
    // RFC 7986: how often a subscriber should read it again (the sync runs hourly).
    'REFRESH-INTERVAL;VALUE=DURATION:PT1H',
    'X-PUBLISHED-TTL:PT1H',
  ];
  const seen = new Set<string>();
  for (const e of entries) {
    // Two payments of one kind on one day of one holding (a special dividend beside the regular one) are two events.
    let n = 1;
    while (seen.has(uidOf(e, options.user, n))) n++;
    const uid = uidOf(e, options.user, n);
    seen.add(uid);
    const instrument = e.ticker ?? e.name ?? e.figi;
    const money = (m: { currency: string; value: string } | null) =>
      m ? `${m.value} ${m.currency.toUpperCase()}` : null;
    lines.push(
      'BEGIN:VEVENT',
      `UID:${uid}`,
      `DTSTAMP:${stamp(options.now)}`,
      `DTSTART;VALUE=DATE:${basicDate(e.payment_date)}`,
      `DTEND;VALUE=DATE:${basicDate(nextDay(e.payment_date))}`,
      `SUMMARY:${escapeText(w.summary({ instrument, kind: w.kind[e.kind], amount: money(e.expected_amount) }))}`,
      `DESCRIPTION:${escapeText(
        w.description({
          perUnit: money(e.amount_per_unit),
          quantity: e.quantity,
          record: e.record_date,
          account: e.account_id,
        }),
      )}`,
      'TRANSP:TRANSPARENT',
      'END:VEVENT',
    );
  }
  lines.push('END:VCALENDAR');
  return lines.map(foldLine).join('\r\n') + '\r\n';
}
