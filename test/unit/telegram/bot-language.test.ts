import { htmlToPlain } from '../../../emulator/telegram/html';
import { LANGUAGES } from '../../../lib/i18n';
import {
  BOT_MESSAGES,
  botLocale,
  cardText,
  keyboard,
  MAX_MESSAGE_CHARS,
  notificationText,
} from '../../../lib/telegram/format';
import { EVENT_KINDS } from '../../../lib/telegram/model';
import { EN } from '../../../lib/telegram/messages-en';
import { RU } from '../../../lib/telegram/messages-ru';
import { ALLOWED, CHAT, command, harness, ID, MEMBER, press } from './bot-harness';

/**
 * The bot speaks each chat's language: its /lang choice, else UI_LANGUAGE,
 * else the person's Telegram app language among ours, else English; times in
 * the configured zone. Through the bot in-process (bot-harness).
 */

const replies = (h: ReturnType<typeof harness>) =>
  h.calls.filter((c) => c.method === 'sendMessage').map((c) => c.payload.text as string);
const answers = (h: ReturnType<typeof harness>) =>
  h.calls.filter((c) => c.method === 'answerCallbackQuery').map((c) => c.payload.text as string);

describe('the language of a chat', () => {
  it.each([
    ['the chat chose ru', { chosen: 'ru' as const }, RU],
    ['the chat chose en, the person’s app is Russian', { chosen: 'en' as const, code: 'ru' }, EN],
    ['no choice, the app is ru-RU', { code: 'ru-RU' }, RU],
    ['no choice, the app is German', { code: 'de' }, EN],
    ['no choice, no app language', {}, EN],
    ['no choice, UI_LANGUAGE=ru over an English app', { fixed: 'ru' as const, code: 'en-US' }, RU],
    ['the chat chose en over UI_LANGUAGE=ru', { chosen: 'en' as const, fixed: 'ru' as const }, EN],
    ['a hostile language_code', { code: 'ru;DROP TABLE'.repeat(5) }, EN],
  ])('%s: /help answers in it', async (_, o: { chosen?: 'ru' | 'en'; fixed?: 'ru' | 'en'; code?: string }, m) => {
    const h = harness(undefined, [ALLOWED], { language: o.fixed, timeZone: 'UTC' });
    if (o.chosen) h.languages.set(CHAT, o.chosen);
    await h.handle(command('/help', MEMBER, CHAT, o.code));
    expect(replies(h)).toEqual([m.help]);
  });

  it('/lang ru by a configured person: stored for the chat, answered in Russian; later answers follow it', async () => {
    const h = harness();
    await h.handle(command('/lang RU', ALLOWED));
    expect(h.writes.filter((w) => w.startsWith('lang:'))).toEqual([`lang:${CHAT}:ru`]);
    expect(replies(h)).toEqual([RU.langSet('русский')]);
    await h.handle(command('/help', MEMBER, CHAT, 'en'));
    await h.handle(command('/lang', MEMBER, CHAT, 'en'));
    expect(replies(h).slice(1)).toEqual([RU.help, RU.langNow('русский', true)]);
  });

  it('/lang with a language we do not ship, or junk, changes nothing and says how', async () => {
    const h = harness();
    for (const text of ['/lang de', '/lang ru en', '/lang <b>']) await h.handle(command(text, ALLOWED));
    expect(h.writes.filter((w) => w.startsWith('lang:'))).toEqual([]);
    expect(replies(h)).toEqual([EN.langUsage, EN.langUsage, EN.langUsage]);
  });

  it('a member who may not change anything cannot set it, but may ask; a bare /lang writes nothing', async () => {
    const h = harness();
    await h.handle(command('/lang ru', MEMBER, CHAT, 'ru'));
    await h.handle(command('/lang@test_bot en', MEMBER));
    await h.handle(command('/lang', MEMBER, CHAT, 'ru'));
    expect(h.writes).toEqual([expect.stringMatching(/^update:/)]); // only the bare /lang went through
    expect(replies(h)).toEqual([RU.notAllowed, EN.notAllowed, RU.langNow('русский', false)]);
  });

  it('a stranger is refused in their own language, and the chats’ choices are not read for them', async () => {
    const h = harness();
    h.languages.set(555, 'en');
    let reads = 0;
    const original = h.languages.get.bind(h.languages);
    h.languages.get = (chat) => (reads++, original(chat));
    await h.handle(command('/find x', 777, 555, 'ru'));
    expect(replies(h)).toEqual([RU.refusal]);
    expect(reads).toBe(0);
  });

  it('a press in a Russian chat: answered, edited and labelled in Russian; the buttons’ data is the same', async () => {
    const h = harness({ state: 'failed', updated_at: '2026-12-06T01:55:03.000Z' }, [ALLOWED], {
      timeZone: 'Europe/Moscow',
    });
    h.languages.set(CHAT, 'ru');
    await h.handle(press(`v1:r:${ID}`, ALLOWED, { languageCode: 'en' }));
    expect(answers(h)).toEqual(['Повторяю…']);
    const edit = h.calls.find((c) => c.method === 'editMessageText')!.payload;
    const text = htmlToPlain(edit.text as string);
    expect(text).toContain('состояние: в очереди');
    expect(text).toContain('Повтор запущен.');
    // Times in the configured zone, named: 01:55:03 UTC is 04:55:03 in Moscow.
    expect(text).toContain('изменено: 6 дек. 2026 г., 04:55:03 Europe/Moscow (GMT+3)');
    const buttons = (edit.reply_markup as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> })
      .inline_keyboard[0];
    expect(buttons).toEqual([
      { text: 'Повторить', callback_data: `v1:r:${ID}` },
      { text: 'Отменить', callback_data: `v1:c:${ID}` },
      { text: 'Открыть', callback_data: `v1:o:${ID}` },
    ]);
  });

  it('an unreadable choice (DynamoDB down) is no choice: the press is still answered and acted on', async () => {
    const h = harness({ state: 'failed' });
    h.languages.get = () => {
      throw new Error('store unavailable');
    };
    await h.handle(press(`v1:r:${ID}`, ALLOWED, { languageCode: 'ru' }));
    expect(answers(h)).toEqual(['Повторяю…']);
    expect(h.writes).toContain('activate');
  });

  it('a refused press in Russian names the state in Russian', async () => {
    const h = harness({ state: 'completed' });
    h.languages.set(CHAT, 'ru');
    await h.handle(press(`v1:c:${ID}`, ALLOWED));
    expect(answers(h)).toEqual(['Кнопка устарела: загрузка сейчас в состоянии «завершена».']);
  });
});

describe('the catalogues', () => {
  it('have the same messages in both languages, each under Telegram’s limits', () => {
    expect(Object.keys(RU).sort()).toEqual(Object.keys(EN).sort());
    for (const m of Object.values(BOT_MESSAGES)) {
      for (const [key, value] of Object.entries(m))
        if (typeof value === 'string') expect([key, htmlToPlain(value).length <= 4096]).toEqual([key, true]);
      // An answerCallbackQuery text: Telegram allows 0-200 characters.
      for (const text of [
        m.expired,
        m.busy,
        m.alreadyCancelled,
        m.refusal,
        m.notAllowed,
        ...Object.values(m.pending),
        ...Object.keys(m.states).map((s) => m.expiredAt(s as keyof typeof m.states)),
        m.activeExists('01jf0000000000000000000000'),
      ])
        expect(text.length).toBeLessThanOrEqual(200);
      expect(htmlToPlain(m.findNone('<'.repeat(100)))).toContain('<'.repeat(100));
    }
  });

  it.each(LANGUAGES)('%s: every notification and card fits 4,096 characters; every button 64 bytes', (lang) => {
    const locale = botLocale(lang, 'Asia/Kolkata');
    const d = {
      id: ID,
      name: 'я'.repeat(5000),
      state: 'stuck' as const,
      firstHash: 'f'.repeat(64),
      reviewReason: '<&>'.repeat(2000),
      changedAt: Date.UTC(2026, 11, 6, 1, 55, 3),
    };
    for (const kind of EVENT_KINDS) {
      const text = htmlToPlain(notificationText(kind, d, 'https://ui.example', locale));
      expect(text.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
      expect(text).toContain(locale.messages.titles[kind]);
      expect(text).toContain('07:25:03 Asia/Kolkata (GMT+5:30)');
    }
    const note = locale.messages.activeExists(ID);
    expect(htmlToPlain(cardText(d, 'https://ui.example', locale, note)).length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    const buttons = keyboard(ID, locale.messages).inline_keyboard.flat();
    expect(buttons).toEqual([
      { text: locale.messages.buttons.retry, callback_data: `v1:r:${ID}` },
      { text: locale.messages.buttons.cancel, callback_data: `v1:c:${ID}` },
      { text: locale.messages.buttons.open, callback_data: `v1:o:${ID}` },
    ]);
    for (const b of buttons) expect(Buffer.byteLength(b.callback_data)).toBeLessThanOrEqual(64);
  });

  it('plural forms by Intl.PluralRules: 1, 2-4, 5+ and 21 in Russian', () => {
    const plain = (n: number) => htmlToPlain(RU.shortened(n, 4096));
    expect(plain(1)).toContain('не показана ещё 1 строка');
    expect(plain(3)).toContain('не показаны ещё 3 строки');
    expect(plain(5)).toContain('не показаны ещё 5 строк');
    expect(plain(21)).toContain('не показана ещё 21 строка');
    expect(htmlToPlain(EN.shortened(1, 4096))).toContain('1 more line not shown');
    expect(htmlToPlain(EN.shortened(2, 4096))).toContain('2 more lines not shown');
  });
});
