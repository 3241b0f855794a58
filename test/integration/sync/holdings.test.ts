import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import ICAL from 'ical.js';
import { ACCOUNTS, bondEventsOf, dividendsOf, INSTRUMENTS, portfolioOf } from '../../../emulator/brokerage/dataset';
import { newId } from '../../../lib/ident';
import { HOUR_MS } from '../../../lib/sync/model';
import { atomsToExact, exactAtoms, nanosToDecimal } from '../../../lib/sync/money';
import { bearer, call } from '../../support/http';
import { nanosOf } from '../../support/holdings-fixture';
import { holdingsStack } from '../../support/holdings-stack';
import { httpUrl, stackConfig } from '../../support/stack';
import { DynamoFeedTokenStore } from '../../../lib/sync/dynamodb-feed-tokens';
import { FeedTokenService, MAX_FEED_TOKENS } from '../../../lib/sync/feed-tokens';

/**
 * The holdings' reads on the stack: steps run here against the T-Bank emulator and the stack's own sync table,
 * read back over HTTP through serverless offline (the routes, the exports, the feed) as deployed
 * (test/support/holdings-stack.ts: a fixed fake Date, an hour between attempts).
 */
const h = holdingsStack();
const { data, brokerage } = h;
const later = (ms: number) => h.later(ms);
const sync = (user: string) => h.sync(user);
const clock = () => h.clock;
const DAY = 86_400_000;
/** The real time (Date is jest's fake clock here): the feed's handler, in offline, reads it. */
const realNow = () => Math.round(performance.timeOrigin + performance.now());

beforeAll(() => h.start());
afterAll(() => h.stop());

const OPEN = ACCOUNTS.filter(
  (a) =>
    a.status === 'ACCOUNT_STATUS_OPEN' && a.accessLevel !== 'ACCOUNT_ACCESS_LEVEL_NO_ACCESS' && /TINKOFF/.test(a.type),
);
type Wire = { units: string; nano: number; currency?: string };
const dec = (m: Wire | undefined) => (m ? nanosToDecimal(nanosOf(m)) : null);

/** What the emulator serves now, as the portfolio read must show it (without the sold ones). */
function servedPositions(sold: string[] = []) {
  return Object.fromEntries(
    OPEN.map((a) => [
      a.id,
      portfolioOf(a.id)
        .positions.filter((p) => !sold.includes(p.instrumentUid))
        .map((p) => ({
          instrument_uid: p.instrumentUid,
          ticker: p.ticker,
          name: INSTRUMENTS.find((i) => i.uid === p.instrumentUid)!.name,
          quantity: dec(p.quantity),
          average_position_price: { currency: p.averagePositionPrice.currency, value: dec(p.averagePositionPrice) },
          current_price: { currency: p.currentPrice.currency, value: dec(p.currentPrice) },
          expected_yield: dec(p.expectedYield),
        }))
        .sort((x, y) => (x.ticker < y.ticker ? -1 : 1)),
    ]),
  );
}

/** The payments the emulator served for the held instruments (the events step's ±365 days), × the quantity held. */
function servedPayments(now: number, sold: string[] = []) {
  const within = (iso: string) => Date.parse(iso) >= now - 365 * DAY && Date.parse(iso) <= now + 365 * DAY;
  return OPEN.flatMap((a) =>
    portfolioOf(a.id)
      .positions.filter((p) => !sold.includes(p.instrumentUid))
      .flatMap((p) => {
        const inst = INSTRUMENTS.find((i) => i.uid === p.instrumentUid)!;
        const qty = nanosOf(p.quantity);
        const dividends = dividendsOf(inst)
          .filter((d) => within(d.recordDate))
          .map((d) => ({ kind: 'dividend', pay: d.paymentDate, amount: d.dividendNet }));
        const coupons = bondEventsOf(inst)
          .filter((e) => within(e.eventDate))
          .map((e) => ({ kind: 'coupon', pay: e.payDate, amount: e.payOneBond }));
        return [...dividends, ...coupons].map(
          (x) =>
            `${x.pay.slice(0, 10)}|${a.id}|${p.instrumentUid}|${x.kind}|${x.amount.currency}|${atomsToExact(nanosOf(x.amount) * qty)}`,
        );
      }),
  ).sort();
}
const keyOf = (e: {
  payment_date: string;
  account_id: string;
  instrument_uid: string;
  kind: string;
  expected_amount: { currency: string; value: string };
}) =>
  `${e.payment_date}|${e.account_id}|${e.instrument_uid}|${e.kind}|${e.expected_amount.currency}|${e.expected_amount.value}`;

const positionsOf = (body: { accounts: Array<{ account_id: string; positions: Array<Record<string, unknown>> }> }) =>
  Object.fromEntries(
    body.accounts.map((a) => [
      a.account_id,
      a.positions.map((p) => ({
        instrument_uid: p.instrument_uid,
        ticker: p.ticker,
        name: p.name,
        quantity: p.quantity,
        average_position_price: p.average_position_price,
        current_price: p.current_price,
        expected_yield: p.expected_yield,
      })),
    ]),
  );

const raw = async (path: string, token = process.env.TEST_TOKEN_ALL) => {
  const res = await fetch(httpUrl(path), { headers: token ? bearer(token) : {} });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
};
const csvRows = (bytes: Buffer, delimiter: string) =>
  parse(bytes.toString('utf8'), { bom: true, delimiter, columns: true, record_delimiter: '\r\n' }) as Record<
    string,
    string
  >[];
const sumAtoms = (values: string[]) => values.reduce((s, v) => s + exactAtoms(v.replace(',', '.')), 0n);

describe('a connected account on the stack', () => {
  const user = newId();
  const other = newId();
  const sold = [portfolioOf(OPEN[0].id).positions.find((p) => p.instrumentType === 'share')!.instrumentUid];

  beforeAll(async () => {
    await h.connect(user);
    await h.connect(other);
  });

  it('after a tick, reads back exactly what the emulator served: positions, the calendar, every amount', async () => {
    const { outcome, head } = await sync(user);
    expect([outcome, head.state]).toEqual(['first', 'succeeded']);
    const portfolio = await call('GET', `/sync/${user}/portfolio`);
    expect(portfolio.status).toBe(200);
    expect(positionsOf(portfolio.body)).toEqual(servedPositions());
    for (const a of portfolio.body.accounts) expect(a).toMatchObject({ refresh_failed: false, failed_attempt: null });

    const calendar = await call('GET', `/sync/${user}/calendar`);
    expect(calendar.body.filter).toEqual({ date: 'payment_date', from: null, to: null });
    const served = servedPayments(clock());
    expect(served.length).toBeGreaterThan(20);
    expect(calendar.body.items.map(keyOf).sort()).toEqual(served);
    const dates = calendar.body.items.map((e: { payment_date: string }) => e.payment_date);
    expect(dates).toEqual([...dates].sort());

    // The same amounts through each export, both forms, parsed strictly; and through the feed.
    const total = sumAtoms(served.map((k) => k.split('|')[5]));
    for (const [format, delimiter, column] of [
      ['csv', ',', 'expected_amount'],
      ['excel-ru', ';', 'Ожидается'],
    ] as const) {
      const csv = await raw(`/sync/${user}/exports/calendar?format=${format}`);
      expect(csv.status).toBe(200);
      expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
      expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="calendar(-excel)?\.csv"$/);
      if (format === 'excel-ru') expect([...csv.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
      const rows = csvRows(csv.bytes, delimiter);
      expect(sumAtoms(rows.map((r) => r[column]))).toBe(total);
      const positions = await raw(`/sync/${user}/exports/positions?format=${format}`);
      const prows = csvRows(positions.bytes, delimiter);
      const priceColumn = format === 'csv' ? 'current_price' : 'Текущая цена';
      expect(sumAtoms(prows.map((r) => r[priceColumn]))).toBe(
        sumAtoms(Object.values(servedPositions()).flatMap((ps) => ps.map((p) => p.current_price.value!))),
      );
    }
  }, 60_000);

  it('exports years of operations in pages a strict parser reads, the same operations the read API has', async () => {
    const all = await data.operations(user, '1970-01-01T00:00:00.000Z', '9999-01-01T00:00:00.000Z');
    expect(all.length).toBeGreaterThan(50);
    const csv = await raw(`/sync/${user}/exports/operations?format=excel-ru`);
    expect(csv.headers.get('link')).toBeNull(); // 20 days of operations fit one page; the pages: the unit tests
    const rows = csvRows(csv.bytes, ';');
    expect(rows.map((r) => r['Номер операции'])).toEqual(all.map((o) => o.id));
    expect(sumAtoms(rows.map((r) => r['Сумма'] || '0'))).toBe(sumAtoms(all.map((o) => o.payment?.value ?? '0')));
    expect((await raw(`/sync/${user}/exports/holdings`)).status).toBe(404);
    expect((await raw(`/sync/not-a-ulid/exports/operations`)).status).toBe(404);
    expect((await raw(`/sync/${user}/exports/operations?format=xls`)).status).toBe(400);
    expect((await raw(`/sync/${user}/portfolio`, process.env.TEST_TOKEN_SCAN_READ)).status).toBe(403);
    expect((await call('GET', `/sync/${newId()}/portfolio`)).body).toEqual({ accounts: [] });
    expect((await call('GET', `/sync/${user}x/calendar`)).status).toBe(404);
  });

  it('an instrument sold since the last sync disappears from positions and from the calendar', async () => {
    brokerage.faults.sold = sold;
    later(HOUR_MS + 60_000);
    const { outcome, head } = await sync(user);
    expect([outcome, head.state]).toEqual(['due', 'succeeded']);
    const portfolio = await call('GET', `/sync/${user}/portfolio`);
    expect(positionsOf(portfolio.body)).toEqual(servedPositions(sold));
    const calendar = await call('GET', `/sync/${user}/calendar`);
    expect(calendar.body.items.map(keyOf).sort()).toEqual(servedPayments(clock(), sold));
    expect(calendar.body.items.some((e: { instrument_uid: string }) => sold.includes(e.instrument_uid))).toBe(false);
  }, 60_000);

  it('a failed portfolio step keeps the last good positions and says so', async () => {
    const good = await call('GET', `/sync/${user}/portfolio`);
    brokerage.faults['OperationsService/GetPortfolio'] = { error: 40002 };
    later(HOUR_MS + 60_000);
    const { head } = await sync(user);
    brokerage.faults = {};
    expect(head.sections?.portfolio).toMatchObject({ state: 'failed', error_code: 'INSUFFICIENT_RIGHTS' });
    const stale = await call('GET', `/sync/${user}/portfolio`);
    expect(positionsOf(stale.body)).toEqual(positionsOf(good.body));
    for (const [i, a] of stale.body.accounts.entries()) {
      expect(a.synced_at).toBe(good.body.accounts[i].synced_at);
      expect(a).toMatchObject({
        refresh_failed: true,
        failed_attempt: {
          attempt_id: head.attempt_id,
          started_at: new Date(head.started_at).toISOString(),
          state: head.state,
          error_code: 'INSUFFICIENT_RIGHTS',
        },
      });
    }
  }, 60_000);

  it('the feed: its own token, one user only, refused at once when revoked, never logged', async () => {
    expect(
      (await call('POST', `/sync/${user}/feed-tokens`, undefined, bearer(process.env.TEST_TOKEN_SYNC_READ))).status,
    ).toBe(403);
    expect((await call('POST', `/sync/${newId()}/feed-tokens`)).status).toBe(404); // no connection
    const created = await call('POST', `/sync/${user}/feed-tokens`);
    expect(created.status).toBe(201);
    const { token, token_id, feed_path } = created.body;
    expect(feed_path).toBe(`/sync/${user}/calendar.ics?token=${token}`);
    const feed = await raw(feed_path, undefined);
    expect([feed.status, feed.headers.get('content-type')]).toEqual([200, 'text/calendar; charset=utf-8']);
    const events = new ICAL.Component(ICAL.parse(feed.bytes.toString('utf8'))).getAllSubcomponents('vevent');
    const within = servedPayments(clock(), sold).filter((k) => {
      const day = k.slice(0, 10);
      return (
        day >= new Date(realNow() - 90 * DAY).toISOString().slice(0, 10) &&
        day <= new Date(realNow() + 366 * DAY).toISOString().slice(0, 10)
      );
    });
    expect(events.length).toBe(within.length);
    const amounts = events.map((e) => /(-?\d+(\.\d+)?) [A-Z]{3}$/.exec(String(e.getFirstPropertyValue('summary')))![1]);
    expect(sumAtoms(amounts)).toBe(sumAtoms(within.map((k) => k.split('|')[5])));

    // Another user's calendar is never reachable with it, nor is any route but the feed.
    expect((await raw(`/sync/${other}/calendar.ics?token=${token}`, undefined)).status).toBe(404);
    expect((await raw(`/sync/${user}/calendar`, token)).status).toBe(401);
    expect(
      (await raw(`/sync/${user}/calendar.ics?token=${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, undefined))
        .status,
    ).toBe(404);
    expect((await raw(`/sync/${user}/calendar.ics`, undefined)).status).toBe(404);
    const listed = await call('GET', `/sync/${user}/feed-tokens`);
    expect(listed.body.items).toEqual([{ token_id, user_id: user, created_at: created.body.created_at }]);
    expect(JSON.stringify(listed.body)).not.toContain(token.slice(4));

    expect((await call('DELETE', `/sync/${user}/feed-tokens/${token_id}`)).status).toBe(204);
    expect((await raw(feed_path, undefined)).status).toBe(404);
    expect((await call('DELETE', `/sync/${user}/feed-tokens/${token_id}`)).status).toBe(404);
    expect((await call('GET', `/sync/${user}/feed-tokens`)).body.items).toEqual([]);

    // The offline log has every request line (paths only), and never the token.
    const log = fs.readFileSync(path.join(process.env.TEST_STATE_DIR!, 'logs', 'serverless-offline.log'), 'utf8');
    expect(log).toContain(`/sync/${user}/calendar.ics`);
    expect(log).not.toContain(token.slice(4));
  }, 60_000);
});

describe('feed tokens on DynamoDB, raced', () => {
  const feeds = () =>
    new FeedTokenService(new DynamoFeedTokenStore({ documents: h.aws.documents, table: stackConfig().tables.sync }));

  it('twenty creates at once leave exactly the limit; two revokes of one token revoke it once', async () => {
    const user = newId();
    await h.connect(user);
    const service = feeds();
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => service.create(user, Date.now())));
    const made = results.filter((r) => r.status === 'fulfilled');
    expect(made.length).toBe(MAX_FEED_TOKENS);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(
      Array(20 - MAX_FEED_TOKENS).fill('TOO_MANY_FEED_TOKENS'),
    );
    const listed = await service.list(user);
    expect(listed.length).toBe(MAX_FEED_TOKENS);
    const first = (made[0] as PromiseFulfilledResult<{ token: string; token_id: string }>).value;
    expect(await service.opens(first.token, user)).toBe(true);
    const revokes = await Promise.all([service.revoke(user, first.token_id), service.revoke(user, first.token_id)]);
    expect(revokes.filter(Boolean).length).toBe(1);
    expect(await service.opens(first.token, user)).toBe(false);
    // The count followed: one more may be made, and no more than that.
    await service.create(user, Date.now());
    await expect(service.create(user, Date.now())).rejects.toMatchObject({ code: 'TOO_MANY_FEED_TOKENS' });
  });
});
