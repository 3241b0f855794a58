import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log';
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
import { classify, ContractError, TBankError } from './errors';

/**
 * T-Bank Invest API REST client (read methods only: a read-only token is
 * enough). Every call is `POST <base>/rest/tinkoff.public.invest.api.contract.v1.<Service>/<Method>`
 * with a camelCase JSON body, bounded by the step's abort signal and its
 * remaining time. Failures are TBankError (errors.ts); every call's log line
 * carries its x-tracking-id.
 */

export const TBANK_PRODUCTION_URL = 'https://invest-public-api.tbank.ru';
export const TBANK_SANDBOX_URL = 'https://sandbox-invest-public-api.tbank.ru';

/** A shared per-token, per-service call budget (rate-budget.ts): acquire before each call. */
export interface CallBudget {
  acquire(service: TBankService, signal: AbortSignal, remainingMs: () => number): Promise<void>;
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

  constructor(private readonly opts: TBankClientOptions) {}

  getAccounts = (): Promise<Account[]> => this.call('UsersService', 'GetAccounts', {}, parseAccounts);

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
      (b) => parseOperationsPage(b, q.accountId),
    );

  getDividends = (instrumentId: string, from: string, to: string): Promise<Dividend[]> =>
    this.call('InstrumentsService', 'GetDividends', { instrumentId, from, to }, parseDividends);

  getBondEvents = (instrumentId: string, from: string, to: string): Promise<BondEvent[]> =>
    this.call('InstrumentsService', 'GetBondEvents', { instrumentId, from, to }, parseBondEvents);

  getInstrumentBy = (idType: 'INSTRUMENT_ID_TYPE_FIGI' | 'INSTRUMENT_ID_TYPE_UID', id: string): Promise<Instrument> =>
    this.call('InstrumentsService', 'GetInstrumentBy', { idType, id }, parseInstrument);

  /** One unary call with its retry policy: the parsed answer, or a TBankError carrying the call's tracking id. */
  async call<T>(service: TBankService, method: string, body: object, parse: (body: unknown) => T): Promise<T> {
    const { signal, log } = this.opts;
    const name = `${service}/${method}`;
    const retries = this.opts.retries ?? 3;
    let transient = 0;
    let waits = 0;
    for (;;) {
      await this.opts.budget?.acquire(service, signal, this.opts.remainingMs);
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
      log.warn('tbank_call_failed', {
        method: name,
        kind: err.kind,
        status: err.detail.status,
        api_code: err.detail.apiCode,
        tracking_id: err.trackingId,
        ms: Math.round(performance.now() - started),
      });

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
      });
      text = await res.text();
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      throw new TBankError('transient', `${name}: ${e instanceof Error ? e.message : String(e)}`, { method: name });
    }
    const trackingId = res.headers.get('x-tracking-id') ?? undefined;
    const detail = { method: name, status: res.status, trackingId };
    const json = parseJson(text);
    if (res.ok) {
      if (json === undefined)
        throw new TBankError('bad-answer', `${name}: the answer is not JSON (${snippet(text)})`, detail);
      return { body: json, trackingId };
    }
    const error = json && typeof json === 'object' ? (json as { description?: unknown; message?: unknown }) : undefined;
    const apiCode =
      typeof error?.description === 'string' && /^\d{5}$/.test(error.description) ? error.description : undefined;
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    const kind = classify(res.status, apiCode);
    const message = typeof error?.message === 'string' ? error.message.slice(0, 200) : snippet(text);
    throw new TBankError(kind, `${name} answered ${res.status}${apiCode ? ` ${apiCode}` : ''}: ${message}`, {
      ...detail,
      apiCode,
      resetSeconds: Number.isFinite(reset) && reset >= 0 ? Math.min(reset, 600) : undefined,
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const snippet = (text: string) => JSON.stringify(text.slice(0, 80));
