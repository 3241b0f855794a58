import { call } from '../support/http';
import { v1 } from '../support/downloads';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { htmlToPlain } from '../../emulator/telegram/html';
import { moveKey } from '../../lib/telegram/keys';
import { stackClients } from '../support/stack';
import {
  ALLOWED_USER,
  chats,
  clearFaults,
  deleteMessage,
  emulatorStats,
  fault,
  messages,
  messagesAbout,
  migrate,
  press,
  slowTorrentClient,
  type,
  unmigrate,
  waitFor,
  webhookDelivery,
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

    // Answered at once ("Retrying…"), then the action, then the message shows its outcome.
    const first = await press(chat, ALLOWED_USER(), `v1:r:${id}`, failed.message_id);
    expect(first).toMatchObject({ status: 200, deliveries: 1, answer: { text: 'Retrying…' } });
    expect((await call('GET', `/downloads/${id}`)).body.state).toBe('queued');
    const edited = (await messagesAbout(id, chat)).find((m) => m.message_id === failed.message_id)!;
    expect(edited.edits).toBe(1);
    expect(edited.text).toContain('state: queued');
    expect(edited.text).toContain('Retry started.');

    // Read before the answer: the second Retry is told at once that it is too late.
    const second = await press(chat, ALLOWED_USER(), `v1:r:${id}`, failed.message_id);
    expect(second.answer).toEqual({ text: 'Button expired: the download is queued now.' });
    const refused = (await messagesAbout(id, chat)).find((m) => m.message_id === failed.message_id)!;
    expect(refused.text).toContain('Button expired: the download is queued now.');

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
    // The presses' outcomes that could not edit a message (no message) are replies: none here.
    expect(await titles(chats()[1])).toEqual(['New download', 'Failed', 'Active again']);
  });

  it('answers commands in allowed chats and refuses strangers', async () => {
    const [chat] = chats();
    const id = await newDownload('Cosmos Laundromat');
    // Its notification first: one arriving during a command would be counted as its reply.
    await waitFor('the notification', async () => (await messagesAbout(id, chat)).find(titled('New download')));
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

describe('a press tells the truth, and its outcome reaches the person', () => {
  const outcomeIn = async (chat: number, id: string, after: number) =>
    (await messagesAbout(id, chat)).filter((m) => m.message_id > after);

  it('a download that never existed: "Button expired.", nothing edited or sent', async () => {
    const [chat] = chats();
    const id = await newDownload('truth-missing');
    const card = await waitFor('the card', async () => (await messagesAbout(id, chat)).find(titled('New download')));
    const missing = '01jf0000000000000000000000';
    const pressed = await press(chat, ALLOWED_USER(), `v1:r:${missing}`, card.message_id);
    expect(pressed).toMatchObject({ status: 200, answer: { text: 'Button expired.' } });
    expect((await messages(chat)).filter((m) => m.text.includes(missing))).toEqual([]);
    expect((await messagesAbout(id, chat)).find((m) => m.message_id === card.message_id)!.edits).toBe(0);
  });

  it('Cancel on a download already cancelled: "Already cancelled", the card shows it, nothing changes', async () => {
    const [chat] = chats();
    const id = await newDownload('truth-cancelled');
    const card = await waitFor('the card', async () => (await messagesAbout(id, chat)).find(titled('New download')));
    expect((await call('POST', `/downloads/${id}/state`, { state: 'cancelled' })).status).toBe(200);
    const pressed = await press(chat, ALLOWED_USER(), `v1:c:${id}`, card.message_id);
    expect(pressed.answer).toEqual({ text: 'Already cancelled; nothing was changed.' });
    const shown = (await messagesAbout(id, chat)).find((m) => m.message_id === card.message_id)!;
    expect(shown.edits).toBe(1);
    expect(shown.text).toContain('state: cancelled');
    expect(shown.text).toContain('Already cancelled; nothing was changed.');
    expect((await call('GET', `/downloads/${id}`)).body.state).toBe('cancelled');
  });

  it.each([
    ['marked inaccessible', false],
    ['deleted by a person', true],
  ])('Retry on a message the bot cannot reach (%s): the outcome comes as a new message', async (_how, del) => {
    const [chat] = chats();
    const id = await newDownload(`truth-inaccessible-${del}`);
    expect((await call('POST', `/downloads/${id}/state`, { state: 'failed' })).status).toBe(200);
    const failed = await waitFor('the failure message', async () =>
      (await messagesAbout(id, chat)).find(titled('Failed')),
    );
    if (del) await deleteMessage(chat, failed.message_id);
    const pressed = await press(chat, ALLOWED_USER(), `v1:r:${id}`, failed.message_id, !del);
    expect(pressed).toMatchObject({ status: 200, answer: { text: 'Retrying…' } });
    expect((await call('GET', `/downloads/${id}`)).body.state).toBe('queued');
    const outcome = await waitFor('the outcome message', async () =>
      (await outcomeIn(chat, id, failed.message_id)).find((m) => m.text.includes('Retry started.')),
    );
    expect(outcome.text).toContain('state: queued');
    expect(outcome.reply_markup!.inline_keyboard.flat().map((b) => b.callback_data)).toContain(`v1:c:${id}`);
    const original = (await messagesAbout(id, chat)).find((m) => m.message_id === failed.message_id);
    expect(del ? original : original!.edits).toBe(del ? undefined : 0);
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

describe('buttons on a slow torrent client', () => {
  afterEach(async () => {
    await slowTorrentClient(0);
    await webhookDelivery(10_000, 1000, 3);
  });

  async function failedMessage(name: string) {
    const [chat] = chats();
    const id = await newDownload(name);
    expect((await call('POST', `/downloads/${id}/state`, { state: 'failed' })).status).toBe(200);
    const failed = await waitFor('the failure message', async () =>
      (await messagesAbout(id, chat)).find(titled('Failed')),
    );
    return { chat, id, failed };
  }

  it('answers a press within 1 s although its action takes 3 s, then edits the message with the outcome', async () => {
    const { chat, id, failed } = await failedMessage('slow-retry');
    await slowTorrentClient(3000);
    const began = Date.now();
    const pressed = await press(chat, ALLOWED_USER(), `v1:r:${id}`, failed.message_id);
    const tookMs = Date.now() - began;
    expect(pressed).toMatchObject({ status: 200, deliveries: 1, answer: { text: 'Retrying…' } });
    expect(pressed.answered_after_ms).toBeLessThan(1000);
    // The action did take its time: the answer came before it, not after.
    expect(tookMs).toBeGreaterThan(3000);
    const edited = (await messagesAbout(id, chat)).find((m) => m.message_id === failed.message_id)!;
    expect(edited.text).toContain('Retry started.');
    expect(edited.text).toContain('state: queued');
    console.log(`slow press: answered after ${pressed.answered_after_ms} ms, action and edit done after ${tookMs} ms`);
  });

  it('acts once on a press Telegram delivers again because the webhook was slow', async () => {
    const { chat, id, failed } = await failedMessage('redelivered-retry');
    await slowTorrentClient(3000);
    await webhookDelivery(1000, 500, 12);
    const pressed = await press(chat, ALLOWED_USER(), `v1:r:${id}`, failed.message_id);
    // The first delivery timed out (still running, holding the update's lease): the next ones (same update_id)
    // were answered 503 until it was done, then one was answered 200 and did nothing (decision 356).
    expect(pressed.status).toBe(200);
    expect(pressed.deliveries).toBeGreaterThanOrEqual(3);
    const edited = await waitFor('the outcome in the message', async () =>
      (await messagesAbout(id, chat)).find((m) => m.message_id === failed.message_id && m.edits > 0),
    );
    await new Promise((r) => setTimeout(r, 3000)); // a second run would have edited by now
    const final = (await messagesAbout(id, chat)).find((m) => m.message_id === failed.message_id)!;
    expect(final.edits).toBe(1);
    expect(edited.text).toContain('Retry started.');
    expect(final.text).not.toContain('Button expired');
    expect((await call('GET', `/downloads/${id}`)).body.state).toBe('queued');
    expect(pressed.answered_after_ms).toBeLessThan(1000);
  });
});

describe("Telegram's limits", () => {
  it('answers a /find whose full answer would be over 5,000 characters, shortened with a visible mark', async () => {
    const [chat] = chats();
    const tag = `long${Date.now().toString(36)}`;
    const ids = [];
    for (let i = 0; i < 10; i += 1) ids.push(await newDownload(`${tag} ${i} ${'x'.repeat(600)}`));
    // Their notifications first: one arriving during the /find would be counted as a reply.
    await waitFor('the ten notifications', async () =>
      (await messages(chat)).filter((m) => m.text.includes(tag)).length >= 10 ? true : undefined,
    );
    const found = await type(chat, ALLOWED_USER(), `/find ${tag}`);
    expect(found.replies).toHaveLength(1);
    const text = found.replies[0].text;
    expect(text.length).toBeLessThanOrEqual(4096);
    expect(htmlToPlain(found.replies[0].html)).toBe(text);
    for (const id of ids) expect(text).toContain(id);
    expect(text).toContain('x…');
  });
});

describe('a group that became a supergroup', () => {
  const aws = stackClients();
  let old: number;
  afterAll(async () => {
    await unmigrate(old);
    await aws.documents.send(new DeleteCommand({ TableName: process.env.TABLE_TELEGRAM!, Key: moveKey(old) }));
    aws.dynamodb.destroy();
  });

  it('is followed: notifications go to the new chat, which is served without a configuration change', async () => {
    old = chats()[1];
    const { to } = await migrate(old, false);
    const id = await newDownload('after-the-move');
    const moved = await waitFor('the notification in the new chat', async () =>
      (await messagesAbout(id, to)).find(titled('New download')),
    );
    expect(await messagesAbout(id, old)).toEqual([]);
    // Served in the new chat, though only the old id is configured (and the user is not an allowed one).
    const refreshed = await press(to, 777, `v1:o:${id}`, moved.message_id);
    expect(refreshed.answer).toEqual({ text: 'Refreshing…' });
    expect((await type(to, 777, '/help')).replies[0].text).toContain('/find');
    expect((await type(-424242, 777, '/help')).replies[0].text).toMatch(/only serves/);
    expect((await emulatorStats()).unhonoured).toBe(0);
  });
});
