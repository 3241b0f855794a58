import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../http';
import { ApiCode, ApiError, DEFAULT_WIRE, ErrorAnswer, errorAnswer, gatewayAnswer, isApiCode, Wire } from './errors';
import { BAD_GATEWAY_HTML, Faults, namesUnknownCode, spoiled, takeFault } from './faults';
import { AddressLimits, RateLimiter } from './limits';
import { Services } from './services';

export { DEFAULT_WIRE, type Wire } from './errors';
export type { Fault, Faults } from './faults';
export { LIMITS } from './limits';

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
 * A token is `t.` + 8 or more [A-Za-z0-9_-]. Rate limits (limits.ts, sliding windows): per token and service, and per
 * client IP address across all tokens; the 429 answer carries 80002 and the reset header.
 * The methods (services.ts), the errors (errors.ts), the fault knobs (faults.ts: `PUT /emulator/faults`).
 * `GET /emulator/calls` → calls per method and the 429s answered.
 */

const PREFIX = '/rest/tinkoff.public.invest.api.contract.v1.';
const TOKEN = /^Bearer (t\.[A-Za-z0-9_-]{8,})$/;

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
  addressLimits?: AddressLimits | false;
}

export class BrokerageEmulator {
  faults: Faults = {};
  wire: Wire;
  readonly calls: Record<string, number> = {};
  /** Calls naming each `accountId` (answered or refused). */
  readonly accountCalls = new Map<string, number>();
  rateLimited = 0;
  readonly windowMs: number;
  private readonly limiter: RateLimiter;
  private readonly services = new Services();
  private readonly initialWire: Wire;
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  constructor(opts: EmulatorOptions = {}) {
    this.windowMs = opts.windowMs ?? 60_000;
    this.limiter = new RateLimiter(
      this.windowMs,
      opts.clock ?? (() => performance.timeOrigin + performance.now()),
      opts.addressLimits ?? { perMinute: 1000, perSecond: 50 },
    );
    this.initialWire = { ...DEFAULT_WIRE, ...opts.wire };
    this.wire = { ...this.initialWire };
  }

  /** Per client address: the most requests seen in one "minute" and one "second" window, and the 429s for it. */
  get addresses() {
    return this.limiter.addresses;
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
    this.limiter.reset();
    this.rateLimited = 0;
    for (const key of Object.keys(this.calls)) delete this.calls[key];
    this.accountCalls.clear();
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
    const answer = ({ status, body }: ErrorAnswer) => send(status, body);
    const fail = (apiCode: ApiCode) => answer(errorAnswer(apiCode, this.wire));

    if (url.pathname === '/emulator/faults') {
      if (req.method === 'DELETE') this.faults = {};
      if (req.method === 'PUT') {
        const next = JSON.parse(await readBody(req)) as Faults;
        if (namesUnknownCode(next))
          return send(400, { message: 'error: a code of the official table (errors.ts API_ERRORS)' });
        this.faults = { ...this.faults, ...next };
      }
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
    if (!match) return answer(gatewayAnswer('NOT_FOUND', 'Not Found'));
    if (req.method !== 'POST') return answer(gatewayAnswer('UNIMPLEMENTED', 'Method Not Allowed'));
    const [, service, method] = match;
    const name = `${service}/${method}`;
    this.calls[name] = (this.calls[name] ?? 0) + 1;

    // The per-address limiter counts every request, whatever its token (the real one limits IP addresses).
    const byAddress = this.limiter.byAddress(req.socket.remoteAddress ?? '?');
    if (byAddress.over) {
      this.rateLimited++;
      Object.assign(headers, byAddress.headers);
      return fail(80002);
    }

    const token = TOKEN.exec(req.headers.authorization ?? '')?.[1];
    if (token) {
      const byToken = this.limiter.byToken(token, service);
      Object.assign(headers, byToken.headers);
      if (byToken.over) {
        this.rateLimited++;
        return fail(80002);
      }
    }

    const fault = takeFault(this.faults, name, service, token);
    if (fault.hang) return; // never answers: the caller's own bound must end the wait
    if (fault.latencyMs) await new Promise((r) => setTimeout(r, fault.latencyMs));
    if (!token) return fail(40003);
    if (fault.storm) {
      this.rateLimited++;
      headers['x-ratelimit-remaining'] = '0';
      if (Number.isInteger(fault.resetSeconds) && fault.resetSeconds! >= 0)
        headers['x-ratelimit-reset'] = String(fault.resetSeconds);
      return fail(80002);
    }
    if (fault.error) {
      if (isApiCode(fault.error)) return fail(fault.error);
      return send(500, { message: `emulator: fault error ${fault.error} is not in errors.ts API_ERRORS` });
    }
    if (fault.html) {
      res.writeHead(502, { 'content-type': 'text/html', ...dressed() });
      return void res.end(BAD_GATEWAY_HTML);
    }

    let body: Record<string, unknown>;
    try {
      const text = await readBody(req);
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch (err) {
      return answer(gatewayAnswer('INVALID_ARGUMENT', (err as Error).message));
    }
    if (!body || typeof body !== 'object' || Array.isArray(body))
      return answer(gatewayAnswer('INVALID_ARGUMENT', 'the request body is not a JSON object'));
    if (typeof body.accountId === 'string')
      this.accountCalls.set(body.accountId, (this.accountCalls.get(body.accountId) ?? 0) + 1);
    let result: unknown;
    try {
      result = this.services.answer(service, method, body, this.faults);
    } catch (err) {
      if (err instanceof ApiError) return fail(err.apiCode);
      throw err;
    }
    const text = JSON.stringify(spoiled(result, fault));
    res.writeHead(200, { 'content-type': 'application/json', ...dressed() });
    res.end(fault.truncate ? text.slice(0, Math.max(1, Math.floor(text.length / 2))) : text);
  }
}
