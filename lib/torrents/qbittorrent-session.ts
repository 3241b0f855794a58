import { Clock, isoTime } from '../clock';
import type { Logger } from '../log';
import { isRedirect, redirectTarget } from '../util/redirect';
import { TorrentClientAuthError, TorrentClientError } from './errors';
import { credentialsFingerprint, LoginGate, LoginGateStore, MemoryLoginGateStore } from './login-gate';

export type TorrentClientAuth =
  { kind: 'password'; username: string; password: string } | { kind: 'apiKey'; key: string };

export interface SessionOptions {
  baseUrl: string;
  auth: TorrentClientAuth;
  timeoutMs?: number;
  fetch?: typeof fetch;
  log?: Logger;
  now: Clock;
  loginGate?: LoginGateStore;
  /** Awaited before every call that does not opt out (the client's version check). */
  ready: () => Promise<unknown>;
}

export interface CallOptions {
  /** Statuses answered to the caller instead of thrown. */
  allow?: number[];
  checkVersion?: boolean;
  renewed?: boolean;
}

/**
 * The HTTP side of the qBittorrent client: the session (a login through the
 * login gate, whatever cookies it sets sent back as set) or an API key, one
 * renewal on 401/403, the base URL's path kept on every call, every call
 * bounded by timeoutMs.
 */
export class QbittorrentSession {
  private session?: Promise<string>;
  private readonly fetch: typeof fetch;
  private readonly base: URL;
  private readonly gate?: LoginGate;

  constructor(private readonly options: SessionOptions) {
    this.fetch = options.fetch ?? fetch;
    // The path is the client's (a reverse proxy at /qbt/): calls are resolved under it, never from the origin.
    this.base = new URL(options.baseUrl);
    if (!this.base.pathname.endsWith('/')) this.base.pathname += '/';
    const auth = options.auth;
    if (auth.kind === 'password')
      this.gate = new LoginGate(
        options.loginGate ?? new MemoryLoginGateStore(),
        () => credentialsFingerprint(this.base.href, auth.username, auth.password),
        options.now,
      );
  }

  /** A FormData form goes as multipart/form-data (fetch writes its boundary), URLSearchParams urlencoded. */
  async call(
    method: string,
    path: string,
    form?: URLSearchParams | FormData,
    opts: CallOptions = {},
  ): Promise<Response> {
    if (opts.checkVersion !== false) await this.options.ready();
    const headers: Record<string, string> =
      this.options.auth.kind === 'apiKey'
        ? { authorization: `Bearer ${this.options.auth.key}` }
        : { cookie: await this.login() };
    const res = await this.request(method, path, form, headers);
    if ((res.status === 401 || res.status === 403) && !opts.renewed && this.options.auth.kind === 'password') {
      await res.body?.cancel();
      this.session = undefined;
      return this.call(method, path, form, { ...opts, renewed: true });
    }
    if (res.status === 401 || res.status === 403)
      throw new TorrentClientAuthError(
        `${method} ${path} answered ${res.status}: ${refusal(res.status, this.options.auth.kind)}`,
        res.status,
      );
    if (!res.ok && !opts.allow?.includes(res.status))
      throw new TorrentClientError(`${method} ${path} answered ${res.status}`, res.status);
    return res;
  }

  async readText(res: Response, path: string): Promise<string> {
    try {
      return await res.text();
    } catch (err) {
      throw new TorrentClientError(
        `${path}: the answer broke off: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** `/api/v2/…` under the base URL's path (`http://nas/qbt/` → `http://nas/qbt/api/v2/…`). */
  endpoint(path: string): URL {
    return new URL(path.replace(/^\/+/, ''), this.base);
  }

  /** The `Cookie` header to send: every cookie the login set, whatever its name. */
  private login(): Promise<string> {
    const auth = this.options.auth;
    if (auth.kind !== 'password' || !this.gate) return Promise.resolve('');
    const gate = this.gate;
    this.session ??= (async () => {
      // Closed gate: fail now, with no call to the client (every call would add to its refusal count).
      const { recorded } = await gate.permit();
      const form = new URLSearchParams({ username: auth.username, password: auth.password });
      const res = await this.request('POST', '/api/v2/auth/login', form, {});
      const text = (await this.readText(res, '/api/v2/auth/login')).trim();
      if (res.status === 401 || (res.status === 200 && text === 'Fails.')) {
        const next = isoTime(await gate.refused());
        this.options.log?.warn('torrent_client_login_refused', { status: res.status, next_try_at: next });
        throw new TorrentClientAuthError(
          res.status === 401
            ? // Up to 5.1 a wrong password is `Fails.`: a 401 is the Host/Referer/Origin check (a reverse proxy
              // that rewrites Host, or a URL other than the one the WebUI expects). 5.2+ also answers 401 to a wrong password.
              `login refused (401): the client refused our Host/Referer/Origin (a reverse proxy must forward Host; check TORRENT_CLIENT_URL) or, on qBittorrent 5.2+, the username or password; credentials refused, next try at ${next}`
            : `login refused: wrong username or password; credentials refused, next try at ${next}`,
          res.status,
        );
      }
      if (res.status === 403) {
        const next = isoTime(await gate.banned());
        this.options.log?.warn('torrent_client_login_banned', { next_try_at: next });
        throw new TorrentClientAuthError(
          `login refused: this address is banned by the client (too many failed logins); next try at ${next}`,
          403,
        );
      }
      if (!(res.status === 204 || (res.status === 200 && text === 'Ok.')))
        throw new TorrentClientError(`login answered ${res.status}`, res.status);
      const cookies = res.headers
        .getSetCookie()
        .map((c) => c.split(';')[0].trim())
        .filter((c) => c.includes('='));
      if (cookies.length === 0) throw new TorrentClientError('login succeeded but set no session cookie', res.status);
      await gate.accepted(recorded);
      return cookies.join('; ');
    })();
    this.session.catch(() => (this.session = undefined));
    return this.session;
  }

  private async request(
    method: string,
    path: string,
    form: URLSearchParams | FormData | undefined,
    headers: Record<string, string>,
    retried = false,
  ): Promise<Response> {
    let res: Response;
    try {
      res = await this.fetch(this.endpoint(path), {
        method,
        headers: {
          ...headers,
          ...(form instanceof URLSearchParams ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          referer: this.base.href,
        },
        body: form instanceof URLSearchParams ? form.toString() : form,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000),
        // Never followed (lib/util/redirect.ts): a 307 to the login would post the password again, anywhere.
        redirect: 'manual',
      });
    } catch (err) {
      // A kept-alive connection the server closed while this process could not run its timers (a Lambda
      // container frozen between invocations, a held event loop): qBittorrent closes an idle connection after
      // 7 to 9 s and says nothing of it in its headers, and undici, whose own 4 s idle timer did not fire, sends
      // the next request on the dead socket ("other side closed"; decision 167). A GET changes nothing, so it is
      // tried once more on a new connection; a POST may have landed and is not. A timeout is not retried.
      if (method === 'GET' && !retried && connectionDropped(err))
        return this.request(method, path, form, headers, true);
      throw new TorrentClientError(
        `${method} ${path} failed: ${err instanceof Error ? `${err.message}${causeOf(err)}` : String(err)}`,
      );
    }
    if (isRedirect(res.status)) {
      await res.body?.cancel();
      throw new TorrentClientError(
        `${method} ${path} answered ${res.status}, a redirect to ${redirectTarget(res, this.base)}: not followed (set TORRENT_CLIENT_URL to the address that answers)`,
        res.status,
      );
    }
    return res;
  }
}

/**
 * What a 401/403 to a call (not the login) means (src/webui/webapplication.cpp, processRequest and
 * doProcessRequest): 401 is the CSRF or Host check, which runs before any session is looked at (5.2 skips
 * the CSRF check for an API key, never the Host check); 403 is "no session": a wrong API key, or a session
 * refused again right after a new login.
 */
function refusal(status: number, kind: TorrentClientAuth['kind']): string {
  if (status === 401)
    return 'the client refused our Host/Referer/Origin (a reverse proxy must pass the Host the client listens on; check TORRENT_CLIENT_URL)';
  return kind === 'apiKey'
    ? 'the API key was refused (check TORRENT_CLIENT_API_KEY against the WebUI settings)'
    : 'not authorised, even with a new session';
}

function connectionDropped(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } })?.cause?.code;
  return err instanceof TypeError && (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE');
}

function causeOf(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? `: ${cause.message}` : '';
}
