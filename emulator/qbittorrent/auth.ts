import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { Profile, TRAITS } from './profiles';

export type Send = (status: number, payload: unknown, headers?: Record<string, string>) => void;

/**
 * Sessions, API keys and refused logins, as qBittorrent's WebApplication and
 * AuthController keep them.
 */
export class EmulatorAuth {
  readonly sessions = new Set<string>();
  /** Refused logins and bans per caller address. */
  readonly failedLogins = new Map<string, { count: number; bannedUntil: number }>();
  readonly settings = { max_fail_count: 5, ban_duration_ms: 3_600_000 };

  constructor(
    private readonly credentials: { username: string; password: string; apiKey?: string },
    private readonly profile: () => Profile,
    private readonly port: () => number,
  ) {}

  login(form: URLSearchParams, address: string, send: Send): void {
    const modern = TRAITS[this.profile()].modern;
    const failed = this.failedLogins.get(address);
    if (failed && failed.bannedUntil > Date.now()) return send(403, 'Your IP address has been banned');
    if (failed && failed.bannedUntil > 0) this.failedLogins.delete(address); // the ban is over: the count starts again
    if (form.get('username') !== this.credentials.username || form.get('password') !== this.credentials.password) {
      const entry = this.failedLogins.get(address) ?? { count: 0, bannedUntil: 0 };
      entry.count++;
      if (entry.count >= this.settings.max_fail_count) entry.bannedUntil = Date.now() + this.settings.ban_duration_ms;
      this.failedLogins.set(address, entry);
      return modern ? send(401, '') : send(200, 'Fails.');
    }
    this.failedLogins.delete(address);
    const sid = randomBytes(16).toString('hex');
    this.sessions.add(sid);
    const cookie = `${this.cookieName()}=${sid}; HttpOnly; SameSite=Strict; path=/`;
    return modern ? send(204, '', { 'set-cookie': cookie }) : send(200, 'Ok.', { 'set-cookie': cookie });
  }

  authorised(req: http.IncomingMessage): boolean {
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (key !== undefined)
      return TRAITS[this.profile()].modern && this.credentials.apiKey !== undefined && key === this.credentials.apiKey;
    const name = this.cookieName();
    const sid = new RegExp(`(?:^|;\\s*)${name}=([^;]+)`).exec(req.headers.cookie ?? '')?.[1];
    return sid !== undefined && this.sessions.has(sid);
  }

  private cookieName(): string {
    return TRAITS[this.profile()].modern ? `QBT_SID_${this.port()}` : 'SID';
  }
}
