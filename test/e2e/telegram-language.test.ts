import type { SentMessage } from '../../emulator/telegram/emulator';
import { call } from '../support/http';
import { v1 } from '../support/downloads';
import { ALLOWED_USER, chats, messagesAbout, press, type, waitFor } from '../support/telegram';

/**
 * The bot in both languages through the real stack and the Telegram emulator:
 * a chat's /lang choice is stored (the telegram table) and followed by the
 * webhook and the notifier; a chat without one follows the person's app
 * language when a person writes, English otherwise.
 */
jest.setTimeout(120_000);

const [ruChat, enChat] = chats();
const user = ALLOWED_USER();

// The other bot tests read English: the chat goes back to it whatever happened here.
afterAll(() => type(ruChat, user, '/lang en'));

/** The bot's answer to a typed command: notifications (with buttons) of earlier downloads may arrive meanwhile. */
async function answer(chat: number, text: string, languageCode?: string): Promise<string> {
  const typed = await type(chat, user, text, languageCode);
  const answers = typed.replies.filter((m) => m.reply_markup === undefined);
  expect(answers).toHaveLength(1);
  return answers[0].text;
}

const buttonsOf = (m: SentMessage) =>
  m.reply_markup!.inline_keyboard.flat().map((b) => [b.text, b.callback_data ?? '']);

describe('the bot in Russian and English', () => {
  it('/lang ru: that chat’s notifications, buttons and answers are Russian; the other chat’s stay English', async () => {
    expect(await answer(ruChat, '/lang ru')).toBe('Теперь язык этого чата: русский.');

    const created = await call('POST', '/downloads', { infohashes: [v1().infohash], name: 'Синтел <b> & co' });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    expect((await call('POST', `/downloads/${id}/state`, { state: 'failed' })).status).toBe(200);

    const ru = await waitFor('the Russian failure message', async () =>
      (await messagesAbout(id, ruChat)).find((m) => m.text.startsWith('Ошибка')),
    );
    expect(ru.text).toContain('Ошибка: Синтел <b> & co');
    expect(ru.text).toContain('состояние: ошибка');
    // The time of the change in the stack's UI_TIME_ZONE, named (its formatting: test/unit/telegram/bot-language.test.ts).
    expect(ru.text).toMatch(/изменено: \d{1,2} \S+ \d{4} г\., \d\d:\d\d:\d\d \S+/);
    expect(ru.text).toContain('Проверить');
    expect(buttonsOf(ru)).toEqual([
      ['Повторить', `v1:r:${id}`],
      ['Отменить', `v1:c:${id}`],
      ['Открыть', `v1:o:${id}`],
    ]);
    const en = await waitFor('the English failure message', async () =>
      (await messagesAbout(id, enChat)).find((m) => m.text.startsWith('Failed')),
    );
    expect(en.text).toContain('state: failed');
    expect(en.text).toMatch(/changed: \d{1,2} \S+ \d{4}, \d\d:\d\d:\d\d \S+/);
    expect(buttonsOf(en)).toEqual([
      ['Retry', `v1:r:${id}`],
      ['Cancel', `v1:c:${id}`],
      ['Open', `v1:o:${id}`],
    ]);
    for (const m of [ru, en]) {
      expect(m.text.length).toBeLessThanOrEqual(4096);
      for (const [, data] of buttonsOf(m)) expect(Buffer.byteLength(data)).toBeLessThanOrEqual(64);
    }

    // A press in the Russian chat, by a person whose app is English: the chat's choice wins.
    const pressed = await press(ruChat, user, `v1:r:${id}`, ru.message_id, false, 'en');
    expect(pressed).toMatchObject({ status: 200, answer: { text: 'Повторяю…' } });
    const edited = await waitFor('the edited card', async () =>
      (await messagesAbout(id, ruChat)).find(
        (m) => m.message_id === ru.message_id && m.text.includes('Повтор запущен.'),
      ),
    );
    expect(edited.text).toContain('состояние: в очереди');

    expect(await answer(ruChat, '/help')).toMatch(/^Бот загрузок\n/);
    expect(await answer(ruChat, '/find')).toBe('Как искать: /find <имя или начало хеша> (от 1 до 100 символов)');
  });

  it('a chat without a choice answers a person in their app’s language, else English', async () => {
    expect(await answer(enChat, '/help', 'ru-RU')).toMatch(/^Бот загрузок\n/);
    expect(await answer(enChat, '/help', 'de')).toMatch(/^Downloads bot\n/);
    expect(await answer(enChat, '/lang', 'ru')).toBe(
      'Язык этого чата: русский (не выбран). Выбрать: /lang ru или /lang en.',
    );
  });
});
