import { pbkdf2Sync } from 'node:crypto';
import { Clock, isoTime, systemClock } from '../clock';
import { emitMetric } from '../metrics';
import { TorrentLoginDeferredError } from './errors';

/**
 * The login back-off (docs/decisions.md 162). qBittorrent bans the caller's
 * address for an hour (`BanDuration`) after 5 refused logins
 * (`MaxAuthenticationFailCount`), and its count of refusals only resets on a
 * success, its own restart or the ban's end. A poll that logs in every minute
 * with a wrong password bans the service (and every user behind its address)
 * within 5 minutes. So every refused login is recorded in ONE durable gate
 * (one item, shared by every Lambda container), and the next try waits:
 * 31 min after the first refusal, then twice as long after each one (at most
 * 24 h), so there are at most 2 refused logins in any hour and 5 take about
 * 8 hours. A ban (403) closes the gate for the ban's hour. A container that
 * finds the gate closed fails at once with "credentials refused, next try at …"
 * and calls nothing. When the gate opens, ONE container takes the try (a CAS
 * on `nextTryAt` that pushes it on), so a fleet of containers cannot spend
 * several tries at once. New credentials (another fingerprint) may try at once.
 */

export const FIRST_WAIT_MS = 31 * 60_000;
export const MAX_WAIT_MS = 24 * 3_600_000;
/** qBittorrent's default BanDuration (1 h), and a minute of slack. */
export const BAN_WAIT_MS = 61 * 60_000;

export interface LoginGateState {
  /** Refused logins since the last accepted one. */
  refusals: number;
  /** Epoch ms before which nobody logs in with the same credentials. */
  nextTryAt: number;
  reason: 'refused' | 'banned';
  /** Of the credentials that were refused (never the password itself). */
  fingerprint: string;
}

/** Where the gate lives: one item in DynamoDB (dynamodb-login-gate.ts), or a container's memory. */
export interface LoginGateStore {
  read(): Promise<LoginGateState | undefined>;
  /** CAS: replace the state only if its nextTryAt is still `seenNextTryAt`; false when another caller moved it. */
  replace(state: LoginGateState, seenNextTryAt: number): Promise<boolean>;
  /** Writes the state whatever is there (a refusal or a ban is a fact to record). */
  put(state: LoginGateState): Promise<void>;
  clear(): Promise<void>;
}

export function waitAfterRefusals(refusals: number): number {
  return Math.min(FIRST_WAIT_MS * 2 ** Math.max(0, refusals - 1), MAX_WAIT_MS);
}

/**
 * A fingerprint of the credentials: tells "the same password as the refused
 * one" from "new ones", without storing anything a password can be read
 * back from cheaply (PBKDF2, salted with the user and the client's URL).
 */
export function credentialsFingerprint(url: string, username: string, password: string): string {
  return pbkdf2Sync(password, `qbt-login-gate\0${username}\0${url}`, 20_000, 16, 'sha256').toString('hex');
}

export class LoginGate {
  private fingerprintValue?: string;
  constructor(
    private readonly store: LoginGateStore,
    private readonly credentials: () => string,
    private readonly now: Clock = systemClock,
  ) {}

  private fingerprint(): string {
    return (this.fingerprintValue ??= this.credentials());
  }

  /**
   * Before a login: resolves when it may be tried (`recorded`: the gate held
   * refusals, so a success must clear it), or throws TorrentLoginDeferredError.
   */
  async permit(): Promise<{ recorded: boolean }> {
    const state = await this.store.read();
    if (!state || state.refusals === 0) return { recorded: !!state };
    const now = this.now();
    const sameCredentials = state.fingerprint === this.fingerprint();
    if (now < state.nextTryAt && (sameCredentials || state.reason === 'banned'))
      throw new TorrentLoginDeferredError(state.nextTryAt, state.refusals, state.reason);
    // The gate is open to one try: push nextTryAt on first, so other containers wait for its outcome.
    const taken = await this.store.replace(
      { ...state, nextTryAt: now + waitAfterRefusals(state.refusals + 1) },
      state.nextTryAt,
    );
    if (!taken) {
      const latest = await this.store.read();
      throw new TorrentLoginDeferredError(latest?.nextTryAt ?? now, latest?.refusals ?? state.refusals, 'refused');
    }
    return { recorded: true };
  }

  /** A refused login: recorded, and the next try pushed on. Returns when that is. */
  async refused(): Promise<number> {
    const state = await this.store.read();
    const refusals = (state?.refusals ?? 0) + 1;
    const nextTryAt = this.now() + waitAfterRefusals(refusals);
    emitMetric('TorrentLoginRefused', 1, { outcome: 'refused' }, { refusals });
    await this.store.put({ refusals, nextTryAt, reason: 'refused', fingerprint: this.fingerprint() });
    return nextTryAt;
  }

  /** The client banned our address: nobody tries before the ban is over. */
  async banned(): Promise<number> {
    const state = await this.store.read();
    const nextTryAt = this.now() + BAN_WAIT_MS;
    emitMetric('TorrentLoginRefused', 1, { outcome: 'banned' });
    await this.store.put({
      refusals: Math.max(1, state?.refusals ?? 0),
      nextTryAt,
      reason: 'banned',
      fingerprint: this.fingerprint(),
    });
    return nextTryAt;
  }

  async accepted(recorded: boolean): Promise<void> {
    if (recorded) await this.store.clear();
  }
}

/** The gate in one container's memory: what a client without a durable store (a CLI, the stack's check) uses. */
export class MemoryLoginGateStore implements LoginGateStore {
  state?: LoginGateState;
  async read() {
    return this.state && { ...this.state };
  }
  async replace(state: LoginGateState, seen: number) {
    if ((this.state?.nextTryAt ?? 0) !== seen) return false;
    this.state = { ...state };
    return true;
  }
  async put(state: LoginGateState) {
    this.state = { ...state };
  }
  async clear() {
    this.state = undefined;
  }
}

/** What the healthcheck says of the gate: undefined while logins may be tried. */
export async function loginGateProblem(store: LoginGateStore, now: Clock = systemClock): Promise<string | undefined> {
  const state = await store.read();
  if (!state || state.refusals === 0 || now() >= state.nextTryAt) return undefined;
  return state.reason === 'banned'
    ? `banned by the client, next try at ${isoTime(state.nextTryAt)}`
    : `credentials refused, next try at ${isoTime(state.nextTryAt)}`;
}
