import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log';
import { isRedirect, redirectTarget } from '../../util/redirect';
import {
  Account,
  BondEvent,
  Dividend,
  Instrument,
  OperationsPage,
  parseAccounts,
  parseBondEvents,
  parseDividends,
  parseInstrument,
  parseOperationsPage,
  parsePortfolio,
  Portfolio,
  TBankService,
} from './contract';
import { classify, ContractError, PastBoundError, RateScope, TBankError } from './errors';

/**
 * T-Bank Invest API REST client (read methods only: a read-only token is
 * enough). Every call is `POST <base>/rest/tinkoff.public.invest.api.contract.v1.<Service>/<Method>`
 * with a camelCase JSON body, bounded by the step's abort signal and its
 * remaining time. Failures are TBankError (errors.ts); every call's log line
 * carries its x-tracking-id.
 */

export const TBANK_PRODUCTION_URL = 'https://invest-public-api.tbank.ru';
export const TBANK_SANDBOX_URL = 'https://sandbox-invest-public-api.tbank.ru';

/** The shared call budgets (rate-budget.ts): acquire before each call, a retry's too. */
export interface CallBudget {
  acquire(service: TBankService, signal: AbortSignal, remainingMs: () => number): Promise<void>;
  /**
   * A 429's reset: an address's holds every caller of the budget's addresses; a token's holds only
   * that token's calls to `service` (its own limit: the others are not refused for it).
   */
  pause?(ms: number, signal: AbortSignal, scope?: { service: TBankService; rateScope: RateScope }): Promise<void>;
}

export interface TBankClientOptions {
  baseUrl: string;
  token: string;
  appName: string;
  signal: AbortSignal;
  /** The step's remaining time: no wait (rate-limit reset, backoff) may outlast it. */
  remainingMs: () => number;
  log: Logger;
  budget?: CallBudget;
  /** Retries of a transient failure (70001/70002, 5xx, network). */
  retries?: number;
  backoffMs?: number;
  /** Waits for x-ratelimit-reset before a 429 ends the call as RATE_LIMITED. */
  rateLimitWaits?: number;
}

export type CallCounts = Partial<Record<TBankService, number>>;

const PREFIX = '/rest/tinkoff.public.invest.api.contract.v1.';

export class TBankClient {
  /** Calls sent per service (answers of any kind), for reports and the bench. */
  readonly calls: CallCounts = {};
  /** 429 answers met (each was waited for and retried, or ended the call). */
  rateLimited = 0;
  /** Unknown enum values the answers carried, kept raw (contract.ts): `field=value` → occurrences. */
  readonly unknownValues = new Map<string, number>();

  private readonly unknown = (field: string, value: string) => {
    const key = `${field}=${value}`;
    this.unknownValues.set(key, (this.unknownValues.get(key) ?? 0) + 1);
  };

  constructor(private readonly opts: TBankClientOptions) {}

  getAccounts = (): Promise<Account[]> =>
    this.call('UsersService', 'GetAccounts', {}, (b) => parseAccounts(b, this.unknown));

  getPortfolio = (accountId: string): Promise<Portfolio> =>
    this.call('OperationsService', 'GetPortfolio', { accountId }, (b) => parsePortfolio(b, accountId));

  operationsPage = (q: {
    accountId: string;
    from: string;
    to: string;
    cursor?: string;
    limit: number;
  }): Promise<OperationsPage> =>
    this.call(
      'OperationsService',
      'GetOperationsByCursor',
      { accountId: q.accountId, from: q.from, to: q.to, limit: q.limit, ...(q.cursor ? { cursor: q.cursor } : {}) },
      (b) => parseOperationsPage(b, q.accountId, this.unknown),
      { has_next: false, next_cursor: '', items: [] },
    );

  getDividends = (instrumentId: string, from: string, to: string): Promise<Dividend[]> =>
    this.call('InstrumentsService', 'GetDividends', { instrumentId, from, to }, parseDividends, []);

  getBondEvents = (instrumentId: string, from: string, to: string): Promise<BondEvent[]> =>
    this.call(
      'InstrumentsService',
      'GetBondEvents',
      { instrumentId, from, to },
      (b) => parseBondEvents(b, this.unknown),
      [],
    );

  getInstrumentBy = (idType: 'INSTRUMENT_ID_TYPE_FIGI' | 'INSTRUMENT_ID_TYPE_UID', id: string): Promise<Instrument> =>
    this.call('InstrumentsService', 'GetInstrumentBy', { idType, id }, (b) => parseInstrument(b, this.unknown));

  /**
   * One unary call with its retry policy: the parsed answer, or a TBankError carrying the call's tracking id.
   * `empty`: the answer of a period query when T-Bank says 30238 (no data for the specified period).
   */
  async call<T>(
    service: TBankService,
    method: string,
    body: object,
    parse: (body: unknown) => T,
    empty?: T,
  ): Promise<T> {
    const { signal, log } = this.opts;
    const name = `${service}/${method}`;
    const retries = this.opts.retries ?? 3;
    let transient = 0;
    let waits = 0;
    let previous: TBankError | undefined;
    for (;;) {
      try {
        await this.opts.budget?.acquire(service, signal, this.opts.remainingMs);
      } catch (e) {
        // A retry whose send instant runs past the bound keeps the answer that made it wait (a 429's tracking id).
        if (previous && e instanceof PastBoundError)
          throw new PastBoundError(`${e.message}, after ${previous.message}`, previous.detail);
        throw e;
      }
      const started = performance.now();
      let err: TBankError;
      try {
        const answer = await this.send(service, method, body);
        log.debug('tbank_call', {
          method: name,
          status: 200,
          tracking_id: answer.trackingId,
          ms: Math.round(performance.now() - started),
        });
        try {
          return parse(answer.body);
        } catch (e) {
          if (!(e instanceof ContractError)) throw e;
          throw new TBankError('bad-answer', `${name}: ${e.message}`, {
            method: name,
            status: 200,
            trackingId: answer.trackingId,
          });
        }
      } catch (e) {
        if (!(e instanceof TBankError)) throw e; // the signal's reason: the step's bound fired
        err = e;
      }
      previous = err;
      log.warn('tbank_call_failed', {
        method: name,
        kind: err.kind,
        status: err.detail.status,
        api_code: err.detail.apiCode,
        tracking_id: err.trackingId,
        ms: Math.round(performance.now() - started),
      });

      if (err.kind === 'no-data' && empty !== undefined) return empty;
      let wait: number;
      if (err.kind === 'rate-limited') {
        this.rateLimited++;
        wait = Math.max(1, err.detail.resetSeconds ?? 1) * 1000;
        if (++waits > (this.opts.rateLimitWaits ?? 10)) throw err;
      } else if (err.kind === 'transient') {
        if (++transient > retries) throw err;
        const base = (this.opts.backoffMs ?? 250) * 2 ** (transient - 1);
        wait = base / 2 + Math.random() * base;
      } else {
        throw err;
      }
      // A wait that cannot end before the step's bound is no retry at all: fail now, with the cause.
      if (wait >= this.opts.remainingMs()) throw err;
      if (err.kind === 'rate-limited' && this.opts.budget?.pause) {
        // The shared schedule holds the pause; the retry's acquire waits it out with everyone it holds.
        await this.opts.budget.pause(wait, signal, { service, rateScope: err.detail.rateScope ?? 'address' });
        continue;
      }
      await sleep(wait, undefined, { signal }).catch(() => {
        throw signal.reason ?? err;
      });
    }
  }

  private async send(
    service: TBankService,
    method: string,
    body: object,
  ): Promise<{ body: unknown; trackingId?: string }> {
    const { signal } = this.opts;
    const name = `${service}/${method}`;
    this.calls[service] = (this.calls[service] ?? 0) + 1;
    let res: Response;
    let text: string;
    try {
      res = await fetch(new URL(`${PREFIX}${service}/${method}`, this.opts.baseUrl), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.opts.token}`,
          'x-app-name': this.opts.appName,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify(body),
        signal,
        // Never followed: a 307/308 would send the token and the body again, to wherever it points.
        redirect: 'manual',
      });
      text = await res.text();
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      throw new TBankError('transient', `${name}: ${e instanceof Error ? e.message : String(e)}`, { method: name });
    }
    const trackingId = header(res, 'x-tracking-id');
    const detail = { method: name, status: res.status, trackingId };
    if (isRedirect(res.status))
      throw new TBankError(
        'bad-answer',
        `${name} answered ${res.status}, a redirect to ${redirectTarget(res, this.opts.baseUrl)}: not followed (check TBANK_API_URL)`,
        detail,
      );
    const json = parseJson(text);
    if (res.ok) {
      if (json === undefined)
        throw new TBankError('bad-answer', `${name}: the answer is not JSON (${snippet(text)})`, detail);
      return { body: json, trackingId };
    }
    const { apiCode, text: said } = errorBody(json);
    const reset = Number(header(res, 'x-ratelimit-reset'));
    const kind = classify(res.status, apiCode);
    const tokenSpent = header(res, 'x-ratelimit-limit') !== undefined && header(res, 'x-ratelimit-remaining') === '0';
    throw new TBankError(
      kind,
      `${name} answered ${res.status}${apiCode ? ` ${apiCode}` : ''}: ${said ?? snippet(text)}`,
      {
        ...detail,
        apiCode,
        resetSeconds: Number.isFinite(reset) && reset >= 0 ? Math.min(reset, 600) : undefined,
        ...(kind === 'rate-limited' ? { rateScope: tokenSpent ? ('token' as const) : ('address' as const) } : {}),
      },
    );
  }
}

/**
 * A response header under its bare name or as the REST gateway forwards gRPC
 * metadata (`grpc-metadata-<name>`): T-Bank's answers have carried both.
 */
export function header(res: Pick<Response, 'headers'>, name: string): string | undefined {
  return res.headers.get(name) ?? res.headers.get(`grpc-metadata-${name}`) ?? undefined;
}

const API_CODE = /^\d{5}$/;

/**
 * The 5-digit API code and the human text of an error body. The OpenAPI file
 * declares `{code, message, details}` and the gRPC status message IS the API
 * code, so the gateway puts it in `message`; some answers carry it in
 * `description` instead. Whichever holds a 5-digit code gives it; the other
 * string is the text.
 */
export function errorBody(json: unknown): { apiCode?: string; text?: string } {
  const body = json && typeof json === 'object' ? (json as { description?: unknown; message?: unknown }) : {};
  const fields = [body.message, body.description]
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.trim());
  const apiCode = fields.find((v) => API_CODE.test(v));
  const text = fields.find((v) => v && !API_CODE.test(v))?.slice(0, 200);
  return { apiCode, text: text ?? apiCode };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const snippet = (text: string) => JSON.stringify(text.slice(0, 80));
