import {
  ACCOUNTS,
  bondEventsOf,
  dividendsOf,
  INSTRUMENTS,
  OPERATIONS,
  portfolioOf,
  READABLE_ACCOUNTS,
} from './dataset';
import { ApiError } from './errors';
import type { Faults } from './faults';

/**
 * The emulated methods, one handler per service: a request body in, the answer's body out, or an
 * `ApiError`. State kept between calls: the generation of operation ids (`changeIds`).
 */
export class Services {
  private idGeneration = 0;

  answer(service: string, method: string, body: Record<string, unknown>, faults: Faults): unknown {
    const handler = { UsersService: users, OperationsService: operations, InstrumentsService: instruments }[service];
    const answer = handler?.(method, body, { faults, services: this });
    if (answer === undefined) throw new ApiError(30001, `unknown method ${service}/${method}`);
    return answer;
  }

  /** Counts a new read of the operations when `changeIds` is on; the ids carry the count. */
  nextGeneration(): number {
    return ++this.idGeneration;
  }

  generation(): number {
    return this.idGeneration;
  }
}

interface Context {
  faults: Faults;
  services: Services;
}

function users(method: string): unknown {
  if (method === 'GetAccounts') return { accounts: ACCOUNTS };
  return undefined;
}

function operations(method: string, body: Record<string, unknown>, ctx: Context): unknown {
  if (method === 'GetPortfolio') return portfolioOf(account(body.accountId, ctx.faults).id);
  if (method === 'GetOperationsByCursor') return operationsByCursor(body, ctx);
  return undefined;
}

function instruments(method: string, body: Record<string, unknown>): unknown {
  switch (method) {
    case 'GetDividends':
      return { dividends: dividendsOf(instrument(body.instrumentId)).filter((d) => within(d.paymentDate, body)) };
    case 'GetBondEvents':
      return { events: bondEventsOf(instrument(body.instrumentId)).filter((e) => within(e.eventDate, body)) };
    case 'GetInstrumentBy': {
      const field = {
        INSTRUMENT_ID_TYPE_FIGI: 'figi',
        INSTRUMENT_ID_TYPE_UID: 'uid',
        INSTRUMENT_ID_TYPE_TICKER: 'ticker',
      }[String(body.idType)] as 'figi' | 'uid' | 'ticker' | undefined;
      if (!field || typeof body.id !== 'string') throw new ApiError(30001, 'idType and id are required');
      const found = INSTRUMENTS.find(
        (i) => i[field] === body.id && (field !== 'ticker' || i.classCode === body.classCode),
      );
      if (!found) throw new ApiError(50002);
      const { price: _price, ...wire } = found;
      return { instrument: wire };
    }
    default:
      return undefined;
  }
}

/** An account's brokerage methods: 50004 for an unknown id, 40002 for one the token may not read or that is no brokerage account. */
function account(id: unknown, faults: Faults) {
  const found = ACCOUNTS.find((a) => a.id === id);
  if (!found) throw new ApiError(50004);
  if (!READABLE_ACCOUNTS.includes(found) || faults.denyAccounts?.includes(found.id)) throw new ApiError(40002);
  return found;
}

function instrument(id: unknown) {
  const found = INSTRUMENTS.find((i) => i.uid === id || i.figi === id);
  if (!found) throw new ApiError(30001, 'instrument not found');
  return found;
}

/** Newest first; the cursor is the position in the filtered list. Ids change per read with `changeIds`. */
function operationsByCursor(body: Record<string, unknown>, ctx: Context) {
  const acc = account(body.accountId, ctx.faults);
  const limit = body.limit === undefined ? 100 : Number(body.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new ApiError(30001, 'limit must be 1..1000');
  const from = body.from === undefined ? -Infinity : Date.parse(String(body.from));
  const to = body.to === undefined ? Infinity : Date.parse(String(body.to));
  if (Number.isNaN(from) || Number.isNaN(to) || from > to) throw new ApiError(30001, 'from/to are not a valid period');
  const start =
    body.cursor === undefined || body.cursor === ''
      ? 0
      : Number(Buffer.from(String(body.cursor), 'base64url').toString());
  if (!Number.isInteger(start) || start < 0) throw new ApiError(30001, 'invalid cursor');
  const generation = start === 0 && ctx.faults.changeIds ? ctx.services.nextGeneration() : ctx.services.generation();
  const all = OPERATIONS.filter(
    (op) => op.brokerAccountId === acc.id && within(op.date, { from: body.from, to: body.to }, true),
  );
  const page = all.slice(start, start + limit);
  const cursorAt = (i: number) => Buffer.from(String(i)).toString('base64url');
  const items = page.map((op, i) => ({
    ...op,
    id: ctx.faults.changeIds ? `${op.id}-${generation}` : op.id,
    cursor: cursorAt(start + i + 1),
  }));
  const hasNext = start + limit < all.length;
  return { hasNext, nextCursor: hasNext ? cursorAt(start + limit) : '', items };
}

function within(date: string | undefined, range: { from?: unknown; to?: unknown }, toExclusive = false): boolean {
  if (!date) return false;
  const t = Date.parse(date);
  const from = range.from === undefined ? -Infinity : Date.parse(String(range.from));
  const to = range.to === undefined ? Infinity : Date.parse(String(range.to));
  return t >= from && (toExclusive ? t < to : t <= to);
}
