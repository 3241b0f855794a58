import fc from 'fast-check';
import { Pacer, PaceRules } from '../../../lib/telegram/pacer';

/** The pacer's slots against Telegram's rates, on a fake clock: every booked schedule keeps every rule. */
const RULES: PaceRules = { chatGapMs: 1000, groupPerMinute: 20, botPerSecond: 30, marginMs: 0 };
const GROUP = -1001;
const PRIVATE = 42;

/** Books `n` sends for one chat the way a worker does: each after the previous one went out. */
function book(pacer: Pacer, chat: number, n: number, start = 0): number[] {
  const slots: number[] = [];
  let now = start;
  for (let i = 0; i < n; i += 1) {
    now = pacer.reserve(chat, now);
    slots.push(now);
  }
  return slots;
}

const maxInWindow = (times: number[], windowMs: number) =>
  Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + windowMs).length));

describe('Pacer', () => {
  it('sends to a private chat at most once a second, and the first at once', () => {
    const slots = book(new Pacer(RULES), PRIVATE, 5, 10_000);
    expect(slots).toEqual([10_000, 11_000, 12_000, 13_000, 14_000]);
  });

  it('sends to a group at most 20 a minute and once a second: 200 messages take 10 minutes', () => {
    const slots = book(new Pacer(RULES), GROUP, 200);
    expect(maxInWindow(slots, 60_000)).toBe(20);
    expect(maxInWindow(slots, 1000)).toBe(1);
    expect(slots[19]).toBe(19_000); // the first twenty at 1/s
    expect(slots[20]).toBe(60_000); // then the minute's budget is spent
    expect(slots[199]).toBeGreaterThanOrEqual(9 * 60_000);
    expect(slots[199]).toBeLessThan(10 * 60_000);
  });

  it('keeps the bot under 30 a second across many chats', () => {
    const pacer = new Pacer(RULES);
    const all: number[] = [];
    for (let chat = 1; chat <= 100; chat += 1) all.push(...book(pacer, chat, 3));
    all.sort((a, b) => a - b);
    expect(maxInWindow(all, 1000)).toBeLessThanOrEqual(30);
  });

  it('pauses only the chat a 429 was for', () => {
    const pacer = new Pacer(RULES);
    pacer.pause(GROUP, 30_000);
    expect(pacer.reserve(GROUP, 0)).toBe(30_000);
    expect(pacer.reserve(PRIVATE, 0)).toBe(0);
    expect(pacer.peek(-2002, 0)).toBeLessThan(100);
  });

  it('peek names the slot reserve then books', () => {
    const pacer = new Pacer(RULES);
    book(pacer, GROUP, 3);
    const seen = pacer.peek(GROUP, 500);
    expect(pacer.reserve(GROUP, 500)).toBe(seen);
  });

  it('keeps every rule for any interleaving of chats and times', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(-1, -2, 3, 4), fc.integer({ min: 0, max: 5000 })), { maxLength: 120 }),
        (steps) => {
          const pacer = new Pacer(RULES);
          const byChat = new Map<number, number[]>();
          const clock = new Map<number, number>();
          const all: number[] = [];
          for (const [chat, advance] of steps) {
            const now = (clock.get(chat) ?? 0) + advance;
            const at = pacer.reserve(chat, now);
            expect(at).toBeGreaterThanOrEqual(now);
            clock.set(chat, at);
            byChat.set(chat, [...(byChat.get(chat) ?? []), at]);
            all.push(at);
          }
          for (const [chat, times] of byChat) {
            expect(maxInWindow(times, 1000)).toBeLessThanOrEqual(1);
            if (chat < 0) expect(maxInWindow(times, 60_000)).toBeLessThanOrEqual(20);
          }
          if (all.length > 0) expect(maxInWindow(all, 1000)).toBeLessThanOrEqual(30);
        },
      ),
    );
  });
});
