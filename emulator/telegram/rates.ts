import { ApiError } from './objects';

/**
 * Telegram's flood control as a bot meets it (bots FAQ, "My bot is hitting
 * limits"): more than one message a second to a chat, 20 a minute to a group
 * or 30 a second from the bot is answered 429 with `parameters.retry_after`
 * (api.d.ts `ResponseParameters`); a chat sent to again before its
 * retry_after is over is counted `unhonoured` and refused again. Planned
 * faults (429, 500, a dropped connection) come first, per chat.
 */

/** The rates enforced; `undefined` fields are not enforced. */
export interface RateLimits {
  chatPerSecond?: number;
  groupPerMinute?: number;
  botPerSecond?: number;
}

export const TELEGRAM_LIMITS: RateLimits = { chatPerSecond: 1, groupPerMinute: 20, botPerSecond: 30 };

export interface ChatStats {
  sent: number;
  /** 429s answered (rates and planned faults). */
  limited: number;
  /** Requests that came before the retry_after of a 429 was over. */
  unhonoured: number;
}

export type Fault = { fault: '429'; retry_after: number } | { fault: '500' } | { fault: 'timeout'; ms: number };

/** Arrival jitter forgiven when judging rates and retry_after (loopback, a loaded machine). */
const TOLERANCE_MS = 25;

export class FloodControl {
  readonly stats = new Map<number, ChatStats>();
  private readonly faults = new Map<number, Fault[]>();
  /** Accepted sends: per chat and for the bot, arrival times (the last minute's). */
  private readonly accepted = new Map<number, number[]>();
  private readonly botAccepted: number[] = [];
  private readonly penalty = new Map<number, number>();

  constructor(public limits: RateLimits | null) {}

  plan(chatId: number, fault: Fault, count: number): number {
    this.faults.set(chatId, [...(this.faults.get(chatId) ?? []), ...Array.from({ length: count }, () => fault)]);
    return this.faults.get(chatId)!.length;
  }

  clear(): void {
    this.faults.clear();
    this.penalty.clear();
  }

  /**
   * Before a send: a flood inside a retry_after is refused; then the chat's next planned fault.
   * A 429 or 500 throws; a timeout waits and returns true (the caller drops the connection).
   */
  async beforeSend(chatId: number): Promise<boolean> {
    this.checkPenalty(chatId);
    const fault = this.faults.get(chatId)?.shift();
    if (!fault) return false;
    if (fault.fault === '429') this.tooMany(chatId, fault.retry_after);
    if (fault.fault === '500') throw new ApiError(500, 'Internal Server Error');
    await new Promise((r) => setTimeout(r, fault.ms));
    return true;
  }

  /** Telegram's rates over the accepted sends; the send is recorded when it passes. */
  accept(chatId: number): void {
    const now = Date.now();
    const times = (this.accepted.get(chatId) ?? []).filter((t) => t > now - 60_000);
    this.accepted.set(chatId, times);
    while (this.botAccepted.length > 0 && this.botAccepted[0] <= now - 1000) this.botAccepted.shift();
    const limits = this.limits;
    if (limits) {
      const refuseUntil = (freeAt: number) => this.tooMany(chatId, Math.max(1, Math.ceil((freeAt - now) / 1000)));
      const within = (list: number[], windowMs: number) => list.filter((t) => t > now - windowMs + TOLERANCE_MS);
      if (limits.chatPerSecond) {
        const recent = within(times, 1000);
        if (recent.length >= limits.chatPerSecond) refuseUntil(recent[recent.length - limits.chatPerSecond] + 1000);
      }
      if (limits.groupPerMinute && chatId < 0) {
        const recent = within(times, 60_000);
        if (recent.length >= limits.groupPerMinute) refuseUntil(recent[recent.length - limits.groupPerMinute] + 60_000);
      }
      if (limits.botPerSecond) {
        const recent = within(this.botAccepted, 1000);
        if (recent.length >= limits.botPerSecond) refuseUntil(recent[recent.length - limits.botPerSecond] + 1000);
      }
    }
    times.push(now);
    this.botAccepted.push(now);
    this.statsOf(chatId).sent += 1;
  }

  totals(): ChatStats & { chats: Record<number, ChatStats> } {
    const total = [...this.stats.values()].reduce(
      (a, b) => ({ sent: a.sent + b.sent, limited: a.limited + b.limited, unhonoured: a.unhonoured + b.unhonoured }),
      { sent: 0, limited: 0, unhonoured: 0 },
    );
    return { ...total, chats: Object.fromEntries(this.stats) };
  }

  private statsOf(chatId: number): ChatStats {
    const stats = this.stats.get(chatId) ?? { sent: 0, limited: 0, unhonoured: 0 };
    this.stats.set(chatId, stats);
    return stats;
  }

  /** 429 with retry_after; the chat is penalised until it is over. */
  private tooMany(chatId: number, retryAfterS: number): never {
    this.penalty.set(chatId, Math.max(this.penalty.get(chatId) ?? 0, Date.now() + retryAfterS * 1000));
    this.statsOf(chatId).limited += 1;
    throw new ApiError(429, `Too Many Requests: retry after ${retryAfterS}`, { retry_after: retryAfterS });
  }

  /** A send inside a retry_after is a flood: counted, and refused with what is left of it. */
  private checkPenalty(chatId: number): void {
    const until = this.penalty.get(chatId) ?? 0;
    const now = Date.now();
    if (now >= until - TOLERANCE_MS) return;
    this.statsOf(chatId).unhonoured += 1;
    this.tooMany(chatId, Math.max(1, Math.ceil((until - now) / 1000)));
  }
}
