import { ALREADY_CANCELLED, BUSY, EXPIRED, expiredAt } from '../../../lib/telegram/bot';
import { ALLOWED, harness, ID, press } from './bot-harness';

/**
 * What a press answers and shows (issue 41): the download is read before the
 * answer, so the answer tells the truth; the outcome goes into the message, or
 * into a new one when the bot can no longer reach the message (decision 305).
 */
const methods = (h: ReturnType<typeof harness>) => h.calls.map((c) => c.method);
const answerOf = (h: ReturnType<typeof harness>) =>
  h.calls.find((c) => c.method === 'answerCallbackQuery')?.payload.text;
const changes = (h: ReturnType<typeof harness>) => h.writes.filter((w) => !w.startsWith('update:'));

describe('a press is answered with the truth, read before the action', () => {
  it('a download that does not exist (or no longer): "Button expired.", nothing else sent or written', async () => {
    const h = harness();
    await h.handle(press(`v1:r:${ID}`, ALLOWED));
    expect(methods(h)).toEqual(['answerCallbackQuery']);
    expect(answerOf(h)).toBe(EXPIRED);
    expect(changes(h)).toEqual([]);
  });

  it('Cancel on a cancelled download: "Already cancelled", the card refreshed, nothing written', async () => {
    const h = harness({ state: 'cancelled' });
    await h.handle(press(`v1:c:${ID}`, ALLOWED));
    expect(methods(h)).toEqual(['answerCallbackQuery', 'editMessageText']);
    expect(answerOf(h)).toBe(ALREADY_CANCELLED);
    expect(h.calls[1].payload.text).toContain('state: <b>cancelled</b>');
    expect(h.calls[1].payload.text).toContain(ALREADY_CANCELLED);
    expect(changes(h)).toEqual([]);
  });

  it.each([
    ['Retry', 'queued', 'r'],
    ['Cancel', 'completed', 'c'],
  ] as const)('%s on a download %s since: "Button expired: … now."', async (_name, state, code) => {
    const h = harness({ state });
    await h.handle(press(`v1:${code}:${ID}`, ALLOWED));
    expect(answerOf(h)).toBe(expiredAt(state));
    expect(h.calls[1].payload.text).toContain(expiredAt(state));
    expect(changes(h)).toEqual([]);
  });

  it('a press that can go ahead is answered "Retrying…" before the action writes', async () => {
    const h = harness({ state: 'failed' });
    await h.handle(press(`v1:r:${ID}`, ALLOWED));
    expect(methods(h)).toEqual(['answerCallbackQuery', 'editMessageText']);
    expect(answerOf(h)).toBe('Retrying…');
    expect(h.calls[1].payload.text).toContain('Retry started.');
    expect(changes(h)).toEqual(['activate', 'torrent_add']);
  });

  it('the read fails: answered "try again", nothing acted on', async () => {
    const h = harness({ state: 'failed' });
    h.readFails = true;
    await h.handle(press(`v1:r:${ID}`, ALLOWED));
    expect(methods(h)).toEqual(['answerCallbackQuery']);
    expect(answerOf(h)).toBe(BUSY);
    expect(changes(h)).toEqual([]);
  });
});

describe('the outcome reaches the person', () => {
  it('a press on an inaccessible message (date 0): never edited, the card comes as a new message', async () => {
    const h = harness({ state: 'failed' });
    await h.handle(press(`v1:r:${ID}`, ALLOWED, { inaccessible: true }));
    expect(methods(h)).toEqual(['answerCallbackQuery', 'sendMessage']);
    const sent = h.calls[1].payload;
    expect(sent.text).toContain('state: <b>queued</b>');
    expect(sent.text).toContain('Retry started.');
    expect(sent.reply_markup).toEqual({ inline_keyboard: [expect.arrayContaining([expect.anything()])] });
  });

  it('a refused press on an inaccessible message: the refreshed card comes as a new message too', async () => {
    const h = harness({ state: 'cancelled' });
    await h.handle(press(`v1:c:${ID}`, ALLOWED, { inaccessible: true }));
    expect(methods(h)).toEqual(['answerCallbackQuery', 'sendMessage']);
    expect(h.calls[1].payload.text).toContain(ALREADY_CANCELLED);
  });

  it('an edit Telegram refuses (the message deleted since): the card is sent as a new message', async () => {
    const h = harness({ state: 'downloading' });
    h.refused.editMessageText = 'Bad Request: message to edit not found';
    await h.handle(press(`v1:c:${ID}`, ALLOWED));
    expect(methods(h)).toEqual(['answerCallbackQuery', 'editMessageText', 'sendMessage']);
    expect(h.calls[2].payload.text).toContain('Cancelled.');
  });

  it('an unchanged card is not an error and is not sent again', async () => {
    const h = harness({ state: 'failed' });
    h.refused.editMessageText = 'Bad Request: message is not modified: specified new message content …';
    await h.handle(press(`v1:o:${ID}`, ALLOWED));
    expect(methods(h)).toEqual(['answerCallbackQuery', 'editMessageText']);
  });
});

describe('Keep waiting (issue 53): on a timeout warning, answered and run once', () => {
  it('a warned download: "Keeping it…", the warning cleared once, the message shows it with the usual buttons', async () => {
    const h = harness({ state: 'downloading', warning: 'stalled', warned_at: '2026-12-06T01:00:00.000Z' });
    await h.handle(press(`v1:k:${ID}`, ALLOWED));
    expect(methods(h)).toEqual(['answerCallbackQuery', 'editMessageText']);
    expect(answerOf(h)).toBe('Keeping it…');
    expect(h.calls[1].payload.text).toContain('Kept waiting: the clock starts again.');
    expect(JSON.stringify(h.calls[1].payload.reply_markup)).toContain(`v1:r:${ID}`);
    expect(changes(h)).toEqual(['keep']);
    // Pressed again (the same message, or a second person): nothing to wait for, nothing written.
    await h.handle(press(`v1:k:${ID}`, ALLOWED));
    expect(answerOf({ ...h, calls: h.calls.slice(2) } as typeof h)).toBe('Nothing to wait for: the warning is gone.');
    expect(changes(h)).toEqual(['keep']);
  });

  it.each(['completed', 'failed', 'cancelled'] as const)(
    'a download %s since: "Button expired: … now."',
    async (state) => {
      const h = harness({ state, warning: 'stalled' });
      await h.handle(press(`v1:k:${ID}`, ALLOWED));
      expect(answerOf(h)).toBe(expiredAt(state));
      expect(changes(h)).toEqual([]);
    },
  );

  it('Russian labels and answers', async () => {
    const h = harness(
      { state: 'downloading', warning: 'no_metadata', warned_at: '2026-12-06T01:00:00.000Z' },
      [ALLOWED],
      {
        language: 'ru',
        timeZone: 'UTC',
      },
    );
    await h.handle(press(`v1:k:${ID}`, ALLOWED));
    expect(answerOf(h)).toBe('Ждём ещё…');
    expect(h.calls[1].payload.text).toContain('Ждём ещё: отсчёт начат заново.');
  });
});
