import { call } from '../support/http';
import { v1 } from '../support/downloads';
import {
  ALLOWED_USER,
  chats,
  clearFaults,
  fault,
  messages,
  messagesAbout,
  press,
  type,
  waitFor,
} from '../support/telegram';

/**
 * The bot through the real stack: API → downloads table → DynamoDB Local
 * stream → offline stream bridge → telegramNotify → Telegram emulator; and
 * back: emulator → POST /telegram/webhook (secret header) → lib/downloads.
 */
jest.setTimeout(120_000);
afterEach(() => clearFaults());

async function newDownload(name: string): Promise<string> {
  const created = await call('POST', '/downloads', { infohashes: [v1().infohash], name });
  expect(created.status).toBe(201);
  return created.body.id;
}

const titled = (title: string) => (m: { text: string }) => m.text.startsWith(title);

describe('a failed download in Telegram', () => {
  it('gets one message with a review link and three buttons; Retry retries once; stale and foreign presses change nothing', async () => {
    const [chat] = chats();
    const id = await newDownload('Sintel');
    expect((await call('POST', `/downloads/${id}/state`, { state: 'failed' })).status).toBe(200);

    const failed = await waitFor('the failure message', async () =>
      (await messagesAbout(id, chat)).find(titled('Failed')),
    );
    expect(failed.html).toContain(`/review/${id}"`);
    expect(failed.text).toContain('state: failed');
    expect(failed.reply_markup!.inline_keyboard.flat().map((b) => [b.text, b.callback_data])).toEqual([
      ['Retry', `v1:r:${id}`],
      ['Cancel', `v1:c:${id}`],
      ['Open', `v1:o:${id}`],
    ]);

    const first = await press(chat, ALLOWED_USER(), `v1:r:${id}`, failed.message_id);
    expect(first).toMatchObject({ status: 200, answer: { text: 'Retry started.' } });
    expect((await call('GET', `/downloads/${id}`)).body.state).toBe('queued');
    const edited = (await messagesAbout(id, chat)).find((m) => m.message_id === failed.message_id)!;
    expect(edited.edits).toBe(1);
    expect(edited.text).toContain('state: queued');

    const second = await press(chat, ALLOWED_USER(), `v1:r:${id}`, failed.message_id);
    expect(second.answer).toEqual({ text: 'Button expired: the download is queued now.' });

    for (const data of ['retry:123', 'v1:r:123', `v2:r:${id}`, 'garbage\u0000{}', `v1:x:${id}`]) {
      expect((await press(chat, ALLOWED_USER(), data, failed.message_id)).answer).toEqual({ text: 'Button expired.' });
    }
    const stranger = await press(-999, 777, `v1:c:${id}`, 1);
    expect(stranger.answer?.text).toMatch(/only serves/);
    expect((await call('GET', `/downloads/${id}`)).body.state).toBe('queued');

    // Exactly one failure message per chat, and one "active again" (the single retry).
    await waitFor('the retry notification', async () => (await messagesAbout(id, chat)).some(titled('Active again')));
    const titles = async (c: number) => {
      const about = await waitFor('three messages', async () =>
        (await messagesAbout(id, c)).length >= 3 ? messagesAbout(id, c) : undefined,
      );
      return about.map((m) =>
        m.message_id === failed.message_id && c === chat ? 'Failed (edited)' : m.text.split(':')[0],
      );
    };
    expect(await titles(chat)).toEqual(['New download', 'Failed (edited)', 'Active again']);
    expect(await titles(chats()[1])).toEqual(['New download', 'Failed', 'Active again']);
  });

  it('answers commands in allowed chats and refuses strangers', async () => {
    const [chat] = chats();
    const id = await newDownload('Cosmos Laundromat');
    const help = await type(chat, ALLOWED_USER(), '/help');
    expect(help.replies[0].text).toContain('/find');
    const found = await type(chat, ALLOWED_USER(), '/find laundromat');
    expect(found.replies[0].text).toContain(id);
    const got = await type(chat, ALLOWED_USER(), `/get ${id}`);
    expect(got.replies[0].reply_markup!.inline_keyboard[0]).toHaveLength(3);
    expect((await type(chat, ALLOWED_USER(), '/get 123')).replies[0].text).toMatch(/Usage/);
    const refused = await type(555, 777, `/get ${id}`);
    expect(refused.replies.map((m) => m.text)).toEqual([expect.stringMatching(/only serves/)]);
  });
});

describe('notifications', () => {
  it('turns a burst of 50 state changes into 50 messages, in order per download', async () => {
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => newDownload(`burst-${i}`)));
    await Promise.all(
      ids.map(async (id) => {
        for (const state of ['stuck', 'downloading', 'stuck', 'failed'])
          expect((await call('POST', `/downloads/${id}/state`, { state })).status).toBe(200);
        expect((await call('POST', `/downloads/${id}/retry`)).status).toBe(200);
      }),
    );
    for (const chat of chats()) {
      const sent = await waitFor(
        '50 messages',
        async () => {
          const all = (await messages(chat)).filter((m) => ids.some((id) => m.text.includes(id)));
          return all.length >= 50 ? all : undefined;
        },
        90_000,
      );
      expect(sent).toHaveLength(50);
      for (const id of ids) {
        expect(sent.filter((m) => m.text.includes(id)).map((m) => m.text.split(':')[0])).toEqual([
          'New download',
          'Stuck',
          'Stuck',
          'Failed',
          'Active again',
        ]);
      }
    }
  });

  it('retries 429 and 5xx within the bound; the failing chat does not delay the other', async () => {
    const [good, bad] = chats();
    await fault(bad, '429', 2, 2);
    await fault(bad, '500', 2);
    const ids = await Promise.all(Array.from({ length: 3 }, (_, i) => newDownload(`faulty-${i}`)));
    const began = Date.now();
    await waitFor(
      'the good chat',
      async () => (await messages(good)).filter((m) => ids.some((id) => m.text.includes(id))).length === 3,
    );
    const goodMs = Date.now() - began;
    await waitFor(
      'the bad chat',
      async () => (await messages(bad)).filter((m) => ids.some((id) => m.text.includes(id))).length === 3,
      60_000,
    );
    const badMs = Date.now() - began;
    // The faulted chat waited at least one retry_after (2 s); the good one did not wait for it.
    expect(badMs).toBeGreaterThan(goodMs);
    const all = await messages();
    const lastGood = Math.max(
      ...all.flatMap((m, i) => (m.chat_id === good && ids.some((id) => m.text.includes(id)) ? [i] : [])),
    );
    const lastBad = Math.max(
      ...all.flatMap((m, i) => (m.chat_id === bad && ids.some((id) => m.text.includes(id)) ? [i] : [])),
    );
    expect(lastGood).toBeLessThan(lastBad);
  });
});
