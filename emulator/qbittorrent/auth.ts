import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { Profile, TRAITS } from './profiles';
import { MaindataSync } from './sync';

export type Send = (status: number, payload: unknown, headers?: Record<string, string>) => void;

/** One WebSession: its own sync/maindata state, as each session has its own SyncController. */
export interface Session {
  sync: MaindataSync;
}

/**
 * Sessions, API keys and refused logins, as qBittorrent's WebApplication
 * keeps them (src/webui/webapplication.cpp: sessionInitialize,
 * apiKeySessionInitialize, validateCredentials; AuthController::loginAction in
 * src/webui/api/authcontroller.cpp).
 */
export class EmulatorAuth {
  readonly sessions = new Map<string, Session>();
  /** Refused logins and bans per caller address. */
  readonly failedLogins = new Map<string, { count: number; bannedUntil: number }>();
  readonly settings = { max_fail_count: 5, ban_duration_ms: 3_600_000, reverse_proxy: false };

  constructor(
    private readonly credentials: { username: string; password: string; apiKey?: string },
    private readonly profile: () => Profile,
    private readonly port: () => number,
  ) {}

  /**
   * The valid session a request carries: the API key's own (5.2, one session per key, started on first
   * use), else the session cookie's. A wrong key is no session (the caller then answers 403).
   */
  session(req: http.IncomingMessage, bearer: string | undefined): string | undefined {
    if (bearer !== undefined) {
      if (this.credentials.apiKey === undefined || bearer !== this.credentials.apiKey) return undefined;
      if (!this.sessions.has(bearer)) this.sessions.set(bearer, { sync: new MaindataSync() });
      return bearer;
    }
    const name = this.cookieName();
    const sid = new RegExp(`(?:^|;\\s*)${name}=([^;]+)`).exec(req.headers.cookie ?? '')?.[1];
    return sid !== undefined && this.sessions.has(sid) ? sid : undefined;
  }

  /** auth/login; `current` is the session the request already has (then the answer is success at once). */
  login(form: URLSearchParams, address: string, current: string | undefined, send: Send): void {
    const modern = TRAITS[this.profile()].modern;
    if (current) return modern ? send(204, '') : send(200, 'Ok.');
    const failed = this.failedLogins.get(address);
    if (failed && failed.bannedUntil > Date.now())
      return send(403, 'Your IP address has been banned after too many failed authentication attempts.');
    if (failed && failed.bannedUntil > 0) this.failedLogins.delete(address); // the ban is over: the count starts again
    if (form.get('username') !== this.credentials.username || form.get('password') !== this.credentials.password) {
      const entry = this.failedLogins.get(address) ?? { count: 0, bannedUntil: 0 };
      entry.count++;
      if (entry.count >= this.settings.max_fail_count) entry.bannedUntil = Date.now() + this.settings.ban_duration_ms;
      this.failedLogins.set(address, entry);
      // 5.2: APIErrorType::Unauthorized, whose text is the status text.
      return modern ? send(401, 'Unauthorized') : send(200, 'Fails.');
    }
    this.failedLogins.delete(address);
    const sid = randomBytes(16).toString('hex');
    this.sessions.set(sid, { sync: new MaindataSync() });
    const cookie = `${this.cookieName()}=${sid}; HttpOnly; SameSite=Strict; path=/`;
    return modern ? send(204, '', { 'set-cookie': cookie }) : send(200, 'Ok.', { 'set-cookie': cookie });
  }

  private cookieName(): string {
    return TRAITS[this.profile()].modern ? `QBT_SID_${this.port()}` : 'SID';
  }
}
