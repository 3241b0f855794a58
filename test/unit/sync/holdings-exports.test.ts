import { parse } from 'csv-parse/sync';
import ICAL from 'ical.js';
import fc from 'fast-check';
import { tokenHash } from '../../../lib/auth/tokens';
import { answerBytes, csvLine } from '../../../lib/sync/csv';
import { calendarCsv, EXPORT_PAGE_BYTES, OPERATION_COLUMNS, operationsCsvPage } from '../../../lib/sync/exports';
import { FeedTokenService, isFeedToken, newFeedToken, type FeedTokenStore } from '../../../lib/sync/feed-tokens';
import { calendarView } from '../../../lib/sync/holdings';
import { parseCalendarQuery, parseExportQuery } from '../../../lib/sync/holdings-requests';
import { calendarFeed, escapeText, feedWords, foldLine } from '../../../lib/sync/ical';
import type { Decimal } from '../../../lib/sync/money';
import type { Operation } from '../../../lib/sync/tbank/contract';
import { storedFixture, SYNCED_AT, USER } from '../../support/holdings-fixture';

/** The exports' formats as real parsers read them, the operations' pages, the feed, its tokens, the queries at the edge. */

const strict = (text: string, delimiter: string) =>
  parse(text, {
    bom: true,
    delimiter,
    record_delimiter: '\r\n',
    relax_quotes: false,
    relax_column_count: false,
  }) as string[][];
const items = calendarView(storedFixture()).items;

describe('CSV', () => {
  it('excel-ru: a UTF-8 BOM, `;` between fields, a decimal comma, CRLF; the same records as the plain form', () => {
    const excel = Buffer.from(calendarCsv('excel-ru', items), 'utf8');
    expect([...excel.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = excel.toString('utf8');
    const header = text.slice(1, text.indexOf('\r\n'));
    expect(header.split(';')).toContain('Ожидается');
    expect(header).not.toContain(',');
    const rows = strict(text, ';');
    const plain = strict(calendarCsv('csv', items), ',');
    expect(rows.length).toBe(plain.length);
    const amount = plain[0].indexOf('expected_amount');
    // Every amount: the plain one's point is the Excel one's comma, digit for digit.
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i][amount]).toBe(plain[i][amount].replace('.', ','));
      if (plain[i][amount].includes('.')) expect(rows[i][amount]).toMatch(/^-?\d+,\d+$/);
    }
    expect(Buffer.from(calendarCsv('csv', items)).subarray(0, 3).toString()).toBe('pay');
  });

  it('keeps hostile text exact in csv, defuses formulas in excel-ru, and survives quotes, separators, line breaks, lone surrogates', () => {
    const hostile = ['=HYPERLINK("http://x","y")', '+1', '-2', '@SUM(A1)', 'a;b,c', 'two\r\nlines', 'ok \uD800 half'];
    for (const text of hostile) {
      const [plain] = strict(csvLine('csv', [text, { decimal: '-1.5' }]), ',');
      expect(plain).toEqual([text.replace('\uD800', '\uFFFD'), '-1.5']);
      const [excel] = strict(csvLine('excel-ru', [text, { decimal: '-1.5' }]), ';');
      expect(excel[1]).toBe('-1,5');
      expect(excel[0]).toBe(/^[=+\-@]/.test(text) ? `'${text}` : text.replace('\uD800', '\uFFFD'));
    }
    expect(() => csvLine('csv', [{ decimal: '1e3' }])).toThrow(/not an exact decimal/);
    expect(csvLine('excel-ru', [{ time: '2026-11-03T12:34:56.123456Z' }])).toBe('2026-11-03 12:34:56\r\n');
  });

  it('any text round-trips through the strict parser in both forms (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 5 }), (cells) => {
        const wellFormed = cells.map((c) => c.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));
        const [plain] = strict(csvLine('csv', wellFormed), ',');
        expect(plain).toEqual(wellFormed);
        const [excel] = strict(csvLine('excel-ru', wellFormed), ';');
        expect(excel).toEqual(wellFormed.map((c) => (/^[=+\-@\t\r]/.test(c) ? `'${c}` : c)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('operations in pages', () => {
  const op = (i: number, date: string): Operation => ({
    id: String(1000 + i),
    account_id: '2000000001',
    date,
    type: 'OPERATION_TYPE_BUY',
    state: 'OPERATION_STATE_EXECUTED',
    name: `"Quoted"; name, ${i}`,
    payment: { currency: 'rub', value: `-${i}.${String(i % 97).padStart(2, '0')}` as Decimal },
    quantity: String(i),
  });
  // 3,000 operations, every fifth instant shared by three: an instant must never be split between pages.
  const ops: Operation[] = [];
  for (let i = 0; ops.length < 3000; i++) {
    const date = new Date(Date.UTC(2023, 0, 1) + i * 3600_000).toISOString().replace('Z', '123Z');
    for (let k = 0; k < (i % 5 === 0 ? 3 : 1); k++) ops.push(op(ops.length, date));
  }

  it.each(['csv', 'excel-ru'] as const)(
    '%s: pages within the budget, every operation exactly once, in order',
    (format) => {
      const budget = 40_000;
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      do {
        const page = operationsCsvPage(format, ops, budget, after);
        pages++;
        expect(answerBytes(page.body)).toBeLessThanOrEqual(budget);
        const rows = strict(page.body, format === 'csv' ? ',' : ';');
        expect(rows[0].length).toBe(OPERATION_COLUMNS.length);
        seen.push(...rows.slice(1).map((r) => r[OPERATION_COLUMNS.findIndex((c) => c.name === 'operation_id')]));
        if (page.next) expect(ops.filter((o) => o.date === page.next).every((o) => seen.includes(o.id))).toBe(true);
        after = page.next;
      } while (after && pages < 1000);
      expect(pages).toBeGreaterThan(10);
      expect(seen).toEqual(ops.map((o) => o.id));
    },
  );

  it('the default budget leaves room in the 6 MB answer, and a page holding one instant is never empty', () => {
    expect(EXPORT_PAGE_BYTES + 64 * 1024).toBeLessThan(6 * 1024 * 1024);
    const same = ops.slice(0, 3).map((o) => ({ ...o, date: ops[0].date }));
    const page = operationsCsvPage('csv', same, 10, undefined);
    expect(page.rows).toBe(3);
    expect(page.next).toBeUndefined();
    // Quotes weigh double in the Lambda answer (a JSON string): the budget counts them so.
    expect(answerBytes('""')).toBe(4);
  });
});

describe('the iCalendar feed', () => {
  const feed = calendarFeed(items, { user: USER, now: SYNCED_AT, words: feedWords('ru') });

  it('parses with ical.js: one all-day event per payment, stable unique UIDs, texts as written', () => {
    const cal = new ICAL.Component(ICAL.parse(feed));
    expect(cal.getFirstPropertyValue('version')).toBe('2.0');
    const events = cal.getAllSubcomponents('vevent').map((v) => new ICAL.Event(v));
    expect(events.length).toBe(items.length);
    expect(new Set(events.map((e) => e.uid)).size).toBe(items.length);
    for (const [i, e] of events.entries()) {
      expect(e.startDate.isDate).toBe(true);
      expect(e.startDate.toString()).toBe(items[i].payment_date);
    }
    const frac = events.find((e) => e.summary.startsWith('=FRAC'))!;
    expect(frac.summary).toBe('=FRAC: дивиденд 0.166666666833333333 USD');
    expect(frac.description).toContain('На одну бумагу: 0.333333333 USD');
    // Stable: the same payments give the same feed, whatever hour it is read.
    expect(
      calendarFeed(items, { user: USER, now: SYNCED_AT + 1, words: feedWords('ru') }).replace(/DTSTAMP:\S+/g, ''),
    ).toBe(feed.replace(/DTSTAMP:\S+/g, ''));
  });

  it('folds at 75 octets without splitting a character, CRLF only, and escapes TEXT', () => {
    for (const line of feed.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    expect(feed.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    const long = `SUMMARY:${'Ж'.repeat(100)}`;
    const folded = foldLine(long);
    expect(folded.split('\r\n ').join('')).toBe(long);
    expect(escapeText('a;b,c\\d\ne')).toBe('a\\;b\\,c\\\\d\\ne');
    const parsed = new ICAL.Component(ICAL.parse(`BEGIN:VCALENDAR\r\n${folded}\r\nEND:VCALENDAR\r\n`));
    expect(parsed.getFirstPropertyValue('summary')).toBe('Ж'.repeat(100));
  });
});

describe('feed tokens', () => {
  class MemoryFeeds implements FeedTokenStore {
    readonly byHashes = new Map<string, { token_id: string; user_id: string; created_at: string }>();
    lookups = 0;
    connected = new Set([USER]);
    async create(r: { token_id: string; user_id: string; created_at: string }, sha256: string, max: number) {
      if ([...this.byHashes.values()].filter((x) => x.user_id === r.user_id).length >= max) return false;
      this.byHashes.set(sha256, r);
      return true;
    }
    async list(user: string) {
      return [...this.byHashes.values()].filter((r) => r.user_id === user);
    }
    async revoke(user: string, id: string) {
      for (const [h, r] of this.byHashes) if (r.user_id === user && r.token_id === id) return this.byHashes.delete(h);
      return false;
    }
    async byHash(sha256: string) {
      this.lookups++;
      return this.byHashes.get(sha256);
    }
    async hasConnection(user: string) {
      return this.connected.has(user);
    }
  }

  it('is 256 random bits, stored only hashed, opens one user only, refused once revoked or at the limit', async () => {
    const store = new MemoryFeeds();
    const feeds = new FeedTokenService(store);
    const created = (await feeds.create(USER, SYNCED_AT))!;
    expect(created.token).toMatch(/^tsf_[A-Za-z0-9_-]{43}$/);
    expect([...store.byHashes.keys()]).toEqual([tokenHash(created.token)]);
    expect(JSON.stringify([...store.byHashes])).not.toContain(created.token);
    expect(await feeds.opens(created.token, USER)).toBe(true);
    expect(await feeds.opens(created.token, '01jdkq0m7a4zfx9s2e6ys3b8c2')).toBe(false);
    expect(await feeds.list(USER)).toEqual([
      { token_id: created.token_id, user_id: USER, created_at: created.created_at },
    ]);
    expect(await feeds.revoke(USER, created.token_id)).toBe(true);
    expect(await feeds.opens(created.token, USER)).toBe(false);
    expect(await feeds.revoke(USER, created.token_id)).toBe(false);
    for (let i = 0; i < 10; i++) await feeds.create(USER, SYNCED_AT);
    await expect(feeds.create(USER, SYNCED_AT)).rejects.toMatchObject({ status: 409, code: 'TOO_MANY_FEED_TOKENS' });
    // No connection: no token, and none opens its feed.
    expect(await feeds.create('01jdkq0m7a4zfx9s2e6ys3b8c2', SYNCED_AT)).toBeUndefined();
  });

  it('refuses anything not shaped like a feed token before any storage call', async () => {
    const store = new MemoryFeeds();
    const feeds = new FeedTokenService(store);
    for (const bad of [undefined, '', 'tss_' + 'a'.repeat(43), newFeedToken() + 'x', ['tsf_x'], '__proto__'])
      expect(await feeds.opens(bad, USER)).toBe(false);
    expect(store.lookups).toBe(0);
    expect(isFeedToken(newFeedToken())).toBe(true);
  });
});

describe('the queries at the edge', () => {
  it('answers 404 for an unknown dataset and 400 for a bad value or an unknown field (prototype keys too)', () => {
    expect(parseExportQuery('calendar', { format: 'excel-ru', from: '2026-12-01' })).toEqual({
      dataset: 'calendar',
      format: 'excel-ru',
      from: '2026-12-01',
      to: undefined,
      after: undefined,
    });
    expect(parseExportQuery('operations', {}).format).toBe('csv');
    const status = (f: () => unknown) => {
      try {
        f();
        return 200;
      } catch (err) {
        return (err as { status: number }).status;
      }
    };
    expect(status(() => parseExportQuery('Operations', {}))).toBe(404);
    expect(status(() => parseExportQuery('__proto__', {}))).toBe(404);
    expect(status(() => parseExportQuery('operations', { format: 'xlsx' }))).toBe(400);
    expect(status(() => parseExportQuery('positions', { from: '2026-01-01' }))).toBe(400);
    expect(status(() => parseExportQuery('calendar', { after: '2026-01-01T00:00:00Z' }))).toBe(400);
    expect(status(() => parseExportQuery('operations', { after: '2026-01-01' }))).toBe(400);
    expect(status(() => parseCalendarQuery(JSON.parse('{"__proto__":"x"}')))).toBe(400);
    expect(status(() => parseCalendarQuery({ from: '2026-02-30' }))).toBe(400);
    expect(status(() => parseCalendarQuery({ from: '2026-03-02', to: '2026-03-01' }))).toBe(400);
  });
});
