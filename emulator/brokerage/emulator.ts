import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../http';
import {
  ACCOUNTS,
  bondEventsOf,
  dividendsOf,
  INSTRUMENTS,
  OPERATIONS,
  portfolioOf,
  READABLE_ACCOUNTS,
  WireOperation,
} from './dataset';

/**
 * A T-Bank Invest API emulator (REST gateway): the real paths
 * (`POST /rest/tinkoff.public.invest.api.contract.v1.<Service>/<Method>`),
 * camelCase bodies, enum strings, error bodies `{code, message, description}`
 * with the 5-digit API code in `message` (the gRPC status message, as the
 * gateway maps it) and the text in `description`, or the other way round
 * (`wire.errorCodeIn: 'description'`), and the headers x-tracking-id and
 * x-ratelimit-{limit,remaining,reset} as the gateway forwards gRPC metadata,
 * `grpc-metadata-x-…` (or bare: `wire.headers: 'bare'`). `PUT /emulator/wire`
 * changes both at run time.
 * A token is `t.` + 8 or more [A-Za-z0-9_-]. Rate limits are enforced per
 * token and service in fixed windows (`windowMs`, 60 s as in production; a
 * test may scale it down): the 429 answer carries 80002 and the reset header.
 * Every request also counts against its client IP address, across all tokens
 * (`addressLimits`: 1,000 a window and 50 a sixtieth of it, as limits.md says
 * per minute and per second).
 *
 * Fault knobs, by tests and by hand (`PUT /emulator/faults`, `DELETE /emulator/faults`):
 *   {"<Service>/<Method>" | "<Service>" | "*": {"latencyMs": 200, "hang": true,
 *     "error": 40003 | 40002 | 50004 | 70001 | 70002 | 30001 | 30238 | 12002, "storm": true (every call 429),
 *     "html": true (a 502 HTML page), "truncate": true, "badEnum": true, "badMoney": true,
 *     "inject": {"PK": "…"} (extra fields in every item), "times": 2 (the fault applies to the next 2 calls only)},
 *    "changeIds": true (operation ids change between two reads),
    "denyAccounts": ["<account id>"] (40002 on that account's methods: a single-account token)}
 * `GET /emulator/calls` → calls per method and the 429s answered.
 */

export interface Fault {
  latencyMs?: number;
  hang?: boolean;
  error?: number;
  storm?: boolean;
  html?: boolean;
  truncate?: boolean;
  badEnum?: boolean;
  badMoney?: boolean;
  /** Extra fields merged into every object of the answer's lists (and its `instrument`): hostile upstream data. */
  inject?: Record<string, unknown>;
  times?: number;
}

export type Faults = Record<string, Fault> & { changeIds?: boolean; denyAccounts?: string[] };

/** How answers are dressed: where an error body carries the API code, how headers are named. */
export interface Wire {
  errorCodeIn: 'message' | 'description';
  headers: 'prefixed' | 'bare';
}
export const DEFAULT_WIRE: Wire = { errorCodeIn: 'message', headers: 'prefixed' };

export const LIMITS: Record<string, number> = { UsersService: 100, OperationsService: 200, InstrumentsService: 200 };
const PREFIX = '/rest/tinkoff.public.invest.api.contract.v1.';
const TOKEN = /^Bearer (t\.[A-Za-z0-9_-]{8,})$/;

// The documented error codes: HTTP status, gRPC code, message.
const ERRORS: Record<number, [number, number, string]> = {
  12002: [503, 12, 'the method is retired'],
  30001: [400, 3, 'missing or invalid parameter'],
  30238: [400, 3, 'no data for the specified period'],
  40002: [403, 7, 'insufficient privileges'],
  40003: [401, 16, 'authentication token is missing or invalid'],
  50002: [404, 5, 'instrument not found'],
  50004: [404, 5, 'account not found'],
  70001: [500, 13, 'internal error'],
  70002: [503, 14, 'internal network error'],
  70003: [500, 13, 'internal error'],
  80002: [429, 8, 'request limit exceeded'],
};

class ApiError extends Error {
  constructor(
    readonly apiCode: number,
    message?: string,
  ) {
    super(message ?? ERRORS[apiCode]?.[2] ?? 'error');
  }
}

export interface EmulatorOptions {
  /** The rate-limit window ("minute"); BROKERAGE_RATE_WINDOW_MS for the process. */
  windowMs?: number;
  /** The wall clock: tests fake Date, never this. */
  clock?: () => number;
  wire?: Partial<Wire>;
  /**
   * T-Bank's limits per client IP address across every token (limits.md): 1,000 a "minute"
   * (`windowMs`) and 50 a "second" (`windowMs / 60`); beyond them 429 with 80002. `false`: none.
   */
  addressLimits?: { perMinute: number; perSecond: number } | false;
}

export class BrokerageEmulator {
  faults: Faults = {};
  wire: Wire;
  readonly calls: Record<string, number> = {};
  /** Calls naming each `accountId` (answered or refused). */
  readonly accountCalls = new Map<string, number>();
  rateLimited = 0;
  readonly windowMs: number;
  private readonly clock: () => number;
  private readonly initialWire: Wire;
  private readonly windows = new Map<string, { start: number; used: number }>();
  private readonly addressLimits: { perMinute: number; perSecond: number } | false;
  /** Per client address: the most requests seen in one "minute" and one "second" window, and the 429s for it. */
  readonly addresses = new Map<string, { peakMinute: number; peakSecond: number; limited: number }>();
  private idGeneration = 0;
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  constructor(opts: EmulatorOptions = {}) {
    this.windowMs = opts.windowMs ?? 60_000;
    this.addressLimits = opts.addressLimits ?? { perMinute: 1000, perSecond: 50 };
    this.initialWire = { ...DEFAULT_WIRE, ...opts.wire };
    this.wire = { ...this.initialWire };
    this.clock = opts.clock ?? (() => performance.timeOrigin + performance.now());
  }

  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, host, resolve));
    return `http://${host}:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  reset(): void {
    this.faults = {};
    this.wire = { ...this.initialWire };
    this.windows.clear();
    this.rateLimited = 0;
    for (const key of Object.keys(this.calls)) delete this.calls[key];
    this.accountCalls.clear();
    this.addresses.clear();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const headers: Record<string, string> = { 'x-tracking-id': randomBytes(16).toString('hex') };
    const dressed = () => {
      const prefix = this.wire.headers === 'prefixed' ? 'grpc-metadata-' : '';
      return Object.fromEntries(Object.entries(headers).map(([k, v]) => [`${prefix}${k}`, v]));
    };
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', ...dressed() });
      res.end(JSON.stringify(body));
    };
    const fail = (apiCode: number, message?: string) => {
      const [status, code, text] = ERRORS[apiCode] ?? [500, 13, 'internal error'];
      const said = message ?? text;
      send(
        status,
        this.wire.errorCodeIn === 'message'
          ? { code, message: String(apiCode), description: said, details: [] }
          : { code, message: said, description: String(apiCode), details: [] },
      );
    };

    if (url.pathname === '/emulator/faults') {
      if (req.method === 'DELETE') this.faults = {};
      if (req.method === 'PUT') this.faults = { ...this.faults, ...(JSON.parse(await readBody(req)) as Faults) };
      return send(200, this.faults);
    }
    if (url.pathname === '/emulator/wire') {
      if (req.method === 'PUT') {
        const next = { ...this.wire, ...(JSON.parse(await readBody(req)) as Partial<Wire>) };
        if (!['message', 'description'].includes(next.errorCodeIn) || !['prefixed', 'bare'].includes(next.headers))
          return send(400, { message: 'errorCodeIn: message|description, headers: prefixed|bare' });
        this.wire = next;
      }
      return send(200, this.wire);
    }
    if (url.pathname === '/emulator/calls')
      return send(200, {
        calls: this.calls,
        rate_limited: this.rateLimited,
        addresses: Object.fromEntries(this.addresses),
      });

    const match = /^([A-Za-z]+)\/([A-Za-z]+)$/.exec(
      url.pathname.startsWith(PREFIX) ? url.pathname.slice(PREFIX.length) : '',
    );
    if (!match || req.method !== 'POST') return send(404, { code: 12, message: 'unknown method' });
    const [, service, method] = match;
    const name = `${service}/${method}`;
    this.calls[name] = (this.calls[name] ?? 0) + 1;

    // The per-address limiter counts every request, whatever its token (the real one limits IP addresses).
    if (this.addressLimits && this.overAddressLimit(req.socket.remoteAddress ?? '?', this.addressLimits)) {
      this.rateLimited++;
      headers['x-ratelimit-remaining'] = '0';
      headers['x-ratelimit-reset'] = '1';
      return fail(80002);
    }

    const token = TOKEN.exec(req.headers.authorization ?? '')?.[1];
    if (token) {
      // The window is counted even for the answers that fail: the real limiter counts requests.
      const limit = LIMITS[service] ?? 100;
      const now = this.clock();
      const start = now - (now % this.windowMs);
      const key = `${token}|${service}`;
      let w = this.windows.get(key);
      if (!w || w.start !== start) this.windows.set(key, (w = { start, used: 0 }));
      w.used++;
      headers['x-ratelimit-limit'] = String(limit);
      headers['x-ratelimit-remaining'] = String(Math.max(0, limit - w.used));
      headers['x-ratelimit-reset'] = String(Math.ceil((start + this.windowMs - now) / 1000));
      if (w.used > limit) {
        this.rateLimited++;
        return fail(80002);
      }
    }

    const fault = this.takeFault(name, service);
    if (fault.hang) return; // never answers: the caller's own bound must end the wait
    if (fault.latencyMs) await new Promise((r) => setTimeout(r, fault.latencyMs));
    if (!token) return fail(40003);
    if (fault.storm) {
      this.rateLimited++;
      headers['x-ratelimit-remaining'] = '0';
      return fail(80002);
    }
    if (fault.error) return fail(fault.error);
    if (fault.html) {
      res.writeHead(502, { 'content-type': 'text/html', ...dressed() });
      return void res.end(
        '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>',
      );
    }

    let body: Record<string, unknown>;
    try {
      const text = await readBody(req);
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      if (!body || typeof body !== 'object') throw new ApiError(30001, 'the body is not a JSON object');
    } catch {
      return fail(30001, 'the body is not JSON');
    }
    if (typeof body.accountId === 'string')
      this.accountCalls.set(body.accountId, (this.accountCalls.get(body.accountId) ?? 0) + 1);
    let answer: unknown;
    try {
      answer = this.answer(name, body);
    } catch (err) {
      if (err instanceof ApiError) return fail(err.apiCode, err.message);
      throw err;
    }
    if (fault.inject) answer = injected(answer as Record<string, unknown>, fault.inject);
    if (fault.badEnum)
      answer = JSON.parse(
        JSON.stringify(answer).replace(
          /"(ACCOUNT_STATUS|OPERATION_TYPE|OPERATION_STATE|EVENT_TYPE|INSTRUMENT_TYPE)_[A-Z_]+"/,
          '"$1_FROM_THE_FUTURE"',
        ),
      );
    if (fault.badMoney) answer = JSON.parse(JSON.stringify(answer).replace(/"nano":\s*-?\d+/g, '"nano":1000000000'));
    const text = JSON.stringify(answer);
    res.writeHead(200, { 'content-type': 'application/json', ...dressed() });
    res.end(fault.truncate ? text.slice(0, Math.max(1, Math.floor(text.length / 2))) : text);
  }

  /** Counts one request of `address` in its "minute" and "second" windows; true when either is over its limit. */
  private overAddressLimit(address: string, limits: { perMinute: number; perSecond: number }): boolean {
    const now = this.clock();
    const second = Math.max(1, Math.round(this.windowMs / 60));
    const count = (key: string, windowMs: number) => {
      const start = now - (now % windowMs);
      let w = this.windows.get(key);
      if (!w || w.start !== start) this.windows.set(key, (w = { start, used: 0 }));
      return ++w.used;
    };
    const minuteUsed = count(`@${address}|minute`, this.windowMs);
    const secondUsed = count(`@${address}|second`, second);
    let seen = this.addresses.get(address);
    if (!seen) this.addresses.set(address, (seen = { peakMinute: 0, peakSecond: 0, limited: 0 }));
    seen.peakMinute = Math.max(seen.peakMinute, minuteUsed);
    seen.peakSecond = Math.max(seen.peakSecond, secondUsed);
    const over = minuteUsed > limits.perMinute || secondUsed > limits.perSecond;
    if (over) seen.limited++;
    return over;
  }

  private takeFault(name: string, service: string): Fault {
    for (const key of [name, service, '*']) {
      const fault = this.faults[key];
      if (!fault || typeof fault !== 'object') continue;
      if (fault.times !== undefined) {
        if (fault.times <= 0) continue;
        fault.times--;
      }
      return fault;
    }
    return {};
  }

  private answer(name: string, body: Record<string, unknown>): unknown {
    switch (name) {
      case 'UsersService/GetAccounts':
        return { accounts: ACCOUNTS };
      case 'OperationsService/GetPortfolio':
        return portfolioOf(this.account(body.accountId).id);
      case 'OperationsService/GetOperationsByCursor':
        return this.operations(body);
      case 'InstrumentsService/GetDividends':
        return {
          dividends: dividendsOf(this.instrument(body.instrumentId)).filter((d) => within(d.paymentDate, body)),
        };
      case 'InstrumentsService/GetBondEvents':
        return { events: bondEventsOf(this.instrument(body.instrumentId)).filter((e) => within(e.eventDate, body)) };
      case 'InstrumentsService/GetInstrumentBy': {
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
        const { price: _price, ...instrument } = found;
        return { instrument };
      }
      default:
        throw new ApiError(30001, `unknown method ${name}`);
    }
  }

  /** An account's brokerage methods: 50004 for an unknown id, 40002 for one the token may not read or that is no brokerage account. */
  private account(id: unknown) {
    const account = ACCOUNTS.find((a) => a.id === id);
    if (!account) throw new ApiError(50004);
    if (!READABLE_ACCOUNTS.includes(account) || this.faults.denyAccounts?.includes(account.id))
      throw new ApiError(40002);
    return account;
  }

  private instrument(id: unknown) {
    const found = INSTRUMENTS.find((i) => i.uid === id || i.figi === id);
    if (!found) throw new ApiError(30001, 'instrument not found');
    return found;
  }

  /** Newest first; the cursor is the position in the filtered list. Ids change per read with `changeIds`. */
  private operations(body: Record<string, unknown>) {
    const account = this.account(body.accountId);
    const limit = body.limit === undefined ? 100 : Number(body.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new ApiError(30001, 'limit must be 1..1000');
    const from = body.from === undefined ? -Infinity : Date.parse(String(body.from));
    const to = body.to === undefined ? Infinity : Date.parse(String(body.to));
    if (Number.isNaN(from) || Number.isNaN(to) || from > to)
      throw new ApiError(30001, 'from/to are not a valid period');
    const start =
      body.cursor === undefined || body.cursor === ''
        ? 0
        : Number(Buffer.from(String(body.cursor), 'base64url').toString());
    if (!Number.isInteger(start) || start < 0) throw new ApiError(30001, 'invalid cursor');
    if (start === 0 && this.faults.changeIds) this.idGeneration++;
    const all = OPERATIONS.filter(
      (op) => op.brokerAccountId === account.id && within(op.date, { from: body.from, to: body.to }, true),
    );
    const page = all.slice(start, start + limit);
    const cursorAt = (i: number) => Buffer.from(String(i)).toString('base64url');
    const items = page.map((op: WireOperation, i) => ({
      ...op,
      id: this.faults.changeIds ? `${op.id}-${this.idGeneration}` : op.id,
      cursor: cursorAt(start + i + 1),
    }));
    const hasNext = start + limit < all.length;
    return { hasNext, nextCursor: hasNext ? cursorAt(start + limit) : '', items };
  }
}

function within(date: string | undefined, range: { from?: unknown; to?: unknown }, toExclusive = false): boolean {
  if (!date) return false;
  const t = Date.parse(date);
  const from = range.from === undefined ? -Infinity : Date.parse(String(range.from));
  const to = range.to === undefined ? Infinity : Date.parse(String(range.to));
  return t >= from && (toExclusive ? t < to : t <= to);
}

function injected(answer: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const merge = (item: unknown) => (item && typeof item === 'object' ? { ...(item as object), ...extra } : item);
  const out: Record<string, unknown> = { ...answer };
  for (const [key, value] of Object.entries(answer)) {
    if (Array.isArray(value)) out[key] = value.map(merge);
    else if (key === 'instrument') out[key] = merge(value);
  }
  return out;
}
