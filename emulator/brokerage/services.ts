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
 * `ApiError` with the official code (errors.ts). Requests and answers follow the official messages
 * (investAPI `src/docs/contracts/{users,operations,instruments}.proto`, release 1.43, vendored in
 * test/contracts/tbank/; the conformance test holds the answers to them).
 * State kept between calls: the generation of operation ids (`changeIds`).
 */
export class Services {
  private idGeneration = 0;

  answer(service: string, method: string, body: Record<string, unknown>, faults: Faults): unknown {
    const handler = { UsersService: users, OperationsService: operations, InstrumentsService: instruments }[service];
    const answer = handler?.(method, body, { faults, services: this });
    // A method the emulator does not implement (a real one, or a misspelt one: the conformance test checks ours).
    if (answer === undefined) throw new ApiError(12001);
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

/** The names of the methods the emulator implements, per service (the conformance test drives each). */
export const IMPLEMENTED = {
  UsersService: ['GetAccounts'],
  OperationsService: ['GetPortfolio', 'GetOperationsByCursor'],
  InstrumentsService: ['GetDividends', 'GetBondEvents', 'GetInstrumentBy'],
} as const;

interface Context {
  faults: Faults;
  services: Services;
}

function users(method: string): unknown {
  if (method === 'GetAccounts') return { accounts: ACCOUNTS };
  return undefined;
}

function operations(method: string, body: Record<string, unknown>, ctx: Context): unknown {
  if (method === 'GetPortfolio') {
    const answer = portfolioOf(account(body.accountId, ctx.faults).id);
    // `sold`: the holder sold these instruments since; their positions are gone from every account.
    const sold = ctx.faults.sold ?? [];
    return { ...answer, positions: answer.positions.filter((p) => !sold.includes(p.instrumentUid)) };
  }
  if (method === 'GetOperationsByCursor') return operationsByCursor(body, ctx);
  return undefined;
}

const ID_FIELDS = {
  INSTRUMENT_ID_TYPE_FIGI: 'figi',
  INSTRUMENT_ID_TYPE_TICKER: 'ticker',
  INSTRUMENT_ID_TYPE_UID: 'uid',
  INSTRUMENT_ID_TYPE_POSITION_UID: 'positionUid',
} as const;

function instruments(method: string, body: Record<string, unknown>): unknown {
  switch (method) {
    case 'GetDividends': {
      // GetDividendsRequest: `figi` (deprecated) or `instrument_id`; from/to filter by `record_date`.
      const id = body.instrumentId || body.figi;
      if (!id) throw new ApiError(30093);
      const period = periodOf(body);
      return { dividends: dividendsOf(instrument(id)).filter((d) => within(d.recordDate, period)) };
    }
    case 'GetBondEvents': {
      if (!body.instrumentId) throw new ApiError(30237);
      const period = periodOf(body);
      return { events: bondEventsOf(instrument(body.instrumentId)).filter((e) => within(e.eventDate, period)) };
    }
    case 'GetInstrumentBy': {
      // InstrumentRequest: id_type and id required, class_code required for a ticker.
      if (body.idType === undefined || body.idType === 'INSTRUMENT_ID_UNSPECIFIED') throw new ApiError(30006);
      const field = ID_FIELDS[String(body.idType) as keyof typeof ID_FIELDS];
      if (!field) throw new ApiError(30005);
      if (typeof body.id !== 'string' || !body.id) throw new ApiError(30007);
      if (field === 'ticker' && !body.classCode) throw new ApiError(30013);
      const found = INSTRUMENTS.find(
        (i) =>
          (field === 'positionUid' ? `pos-${i.uid}` : i[field]) === body.id &&
          (field !== 'ticker' || i.classCode === body.classCode),
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
  if (!id) throw new ApiError(30021);
  const found = ACCOUNTS.find((a) => a.id === id);
  if (!found) throw new ApiError(50004);
  if (!READABLE_ACCOUNTS.includes(found) || faults.denyAccounts?.includes(found.id)) throw new ApiError(40002);
  return found;
}

function instrument(id: unknown) {
  const found = INSTRUMENTS.find((i) => i.uid === id || i.figi === id);
  if (!found) throw new ApiError(50002);
  return found;
}

/** A request's optional from/to (google.protobuf.Timestamp): 30009/30010 when unreadable, 30012 when reversed. */
function periodOf(body: Record<string, unknown>): { from: number; to: number } {
  const from = body.from === undefined ? -Infinity : Date.parse(String(body.from));
  const to = body.to === undefined ? Infinity : Date.parse(String(body.to));
  if (Number.isNaN(from)) throw new ApiError(30009);
  if (Number.isNaN(to)) throw new ApiError(30010);
  if (from > to) throw new ApiError(30012);
  return { from, to };
}

/** Newest first; the cursor is the position in the filtered list. Ids change per read with `changeIds`. */
function operationsByCursor(body: Record<string, unknown>, ctx: Context) {
  const acc = account(body.accountId, ctx.faults);
  // GetOperationsByCursorRequest.limit: 100 by default, at most 1000.
  const limit = body.limit === undefined ? 100 : Number(body.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new ApiError(30069);
  const period = periodOf(body);
  const start =
    body.cursor === undefined || body.cursor === ''
      ? 0
      : Number(Buffer.from(String(body.cursor), 'base64url').toString());
  // The official table has no code for a cursor the API never issued: 70001, its general one (decision 302).
  if (!Number.isInteger(start) || start < 0) throw new ApiError(70001);
  const generation = start === 0 && ctx.faults.changeIds ? ctx.services.nextGeneration() : ctx.services.generation();
  const all = OPERATIONS.filter((op) => op.brokerAccountId === acc.id && within(op.date, period, true));
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

function within(date: string | undefined, period: { from: number; to: number }, toExclusive = false): boolean {
  if (!date) return false;
  const t = Date.parse(date);
  return t >= period.from && (toExclusive ? t < period.to : t <= period.to);
}
