/**
 * Telegram's send rates (bots FAQ), kept on our side so a burst is delayed
 * instead of answered 429: per private chat about 1 message/s, per group
 * 20/min (and still about 1/s), per bot about 30/s. A 429's `retry_after`
 * pauses only the chat it was answered for.
 *
 * `reserve` hands out send times: the earliest instant that keeps every rule,
 * recorded at once so concurrent callers (one worker per chat, sharing the
 * bot's budget) never take the same slot. Synchronous on purpose: one JS turn
 * reads and books a slot, so no interleaving can double-book it.
 */

export interface PaceRules {
  /** Smallest gap between two messages to one chat (private or group). */
  chatGapMs: number;
  /** Messages per rolling minute to one group (negative chat id). */
  groupPerMinute: number;
  /** Messages per second from the bot in all: kept as an even gap of 1000/n ms. */
  botPerSecond: number;
  /** Added to every gap: our send instant is not Telegram's arrival instant. */
  marginMs: number;
}

export const TELEGRAM_RATES: PaceRules = { chatGapMs: 1000, groupPerMinute: 20, botPerSecond: 30, marginMs: 50 };

const MINUTE_MS = 60_000;
const BOT_HISTORY = 2000;

/** Groups, supergroups and channels have negative ids; private chats (users) positive ones. */
export const isGroupChat = (chatId: number) => chatId < 0;

export class Pacer {
  /** Per chat: its booked send times, ascending (one worker per chat books in order). */
  private readonly chats = new Map<number, number[]>();
  /** The bot's booked send times, ascending (chats book out of order: inserted in place). */
  private readonly bot: number[] = [];
  private readonly pausedUntil = new Map<number, number>();

  constructor(private readonly rules: PaceRules) {}

  /** The send time `reserve` would give now, without booking it. */
  peek(chatId: number, now: number): number {
    return this.botSlot(this.chatSlot(chatId, now));
  }

  /** Books and returns the earliest send time for `chatId` at or after `now`. */
  reserve(chatId: number, now: number): number {
    const at = this.botSlot(this.chatSlot(chatId, now));
    const booked = this.chats.get(chatId) ?? [];
    booked.push(at);
    // A group's rule looks back a minute; the chat gap one message: older entries are never read again.
    const keep = Math.max(1, this.rules.groupPerMinute);
    if (booked.length > keep) booked.splice(0, booked.length - keep);
    this.chats.set(chatId, booked);
    this.bot.splice(this.insertAt(at), 0, at);
    // Bounded by count, not by time: callers' clocks need not agree (the oldest are long past anyway).
    if (this.bot.length > BOT_HISTORY) this.bot.splice(0, this.bot.length - BOT_HISTORY);
    return at;
  }

  /** A 429 for this chat: nothing is sent to it before `until` (the other chats go on). */
  pause(chatId: number, until: number): void {
    this.pausedUntil.set(chatId, Math.max(until, this.pausedUntil.get(chatId) ?? 0));
  }

  pausedTill(chatId: number): number {
    return this.pausedUntil.get(chatId) ?? 0;
  }

  private chatSlot(chatId: number, now: number): number {
    const { chatGapMs, groupPerMinute, marginMs } = this.rules;
    const booked = this.chats.get(chatId) ?? [];
    let at = Math.max(now, this.pausedTill(chatId));
    const last = booked.at(-1);
    if (last !== undefined) at = Math.max(at, last + chatGapMs + marginMs);
    if (isGroupChat(chatId) && groupPerMinute > 0 && booked.length >= groupPerMinute)
      at = Math.max(at, booked[booked.length - groupPerMinute] + MINUTE_MS + marginMs);
    return at;
  }

  private botGap(): number {
    return Math.ceil(1000 / Math.max(1, this.rules.botPerSecond)) + Math.ceil(this.rules.marginMs / 10);
  }

  /** The earliest time >= `at` at least one bot gap away from every booked send. */
  private botSlot(at: number): number {
    const gap = this.botGap();
    for (let i = this.insertAt(at - gap); i < this.bot.length; i += 1) {
      const t = this.bot[i];
      if (t >= at + gap) break;
      if (Math.abs(t - at) < gap) at = t + gap;
    }
    return at;
  }

  private insertAt(t: number): number {
    let lo = 0;
    let hi = this.bot.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.bot[mid] <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
