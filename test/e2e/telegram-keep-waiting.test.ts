import { DynamoDownloadStore } from '../../lib/downloads/dynamodb-store';
import { call } from '../support/http';
import { downloadsStore, v1 } from '../support/downloads';
import { ALLOWED_USER, chats, messagesAbout, press, waitFor } from '../support/telegram';

/**
 * A timeout warning in Telegram (issue 53) through the real stack: the poll's warning write → stream →
 * telegramNotify → a message with Keep waiting and Cancel; the press → webhook → keepWaiting, the store's CAS
 * on the warning, so two presses at once restart the clock once.
 */
jest.setTimeout(120_000);

const { aws, table, store } = downloadsStore();
afterAll(() => aws.dynamodb.destroy());
const titled = (title: string) => (m: { text: string }) => m.text.startsWith(title);

it('a warned download gets Keep waiting and Cancel; two presses at once restart the clock once', async () => {
  const [chat] = chats();
  const created = await call('POST', '/downloads', { infohashes: [v1().infohash], name: 'keep-waiting' });
  const id = created.body.id as string;
  // The warning as the poll writes it: an activation an hour ago set the clock then.
  const earlier = new DynamoDownloadStore({ documents: aws.documents, table, now: () => Date.now() - 3600_000 });
  const active = await earlier.activateIfNoOtherActive(id, 'downloading');
  const warned = await store.warnIfNoProgressSince(id, 'stalled', active.progress_at!);
  expect(warned.warning).toBe('stalled');

  const message = await waitFor('the warning message', async () =>
    (await messagesAbout(id, chat)).find(titled('No progress: keep waiting?')),
  );
  expect(message.reply_markup!.inline_keyboard.flat().map((b) => [b.text, b.callback_data])).toEqual([
    ['Keep waiting', `v1:k:${id}`],
    ['Cancel', `v1:c:${id}`],
  ]);

  const [a, b] = await Promise.all([
    press(chat, ALLOWED_USER(), `v1:k:${id}`, message.message_id),
    press(chat, ALLOWED_USER(), `v1:k:${id}`, message.message_id),
  ]);
  // Both are answered; whichever read the warning first may say "Keeping it…", the other either.
  for (const p of [a, b])
    expect(['Keeping it…', 'Nothing to wait for: the warning is gone.']).toContain(p.answer?.text);
  const after = (await store.get(id))!;
  expect(after.warning).toBeUndefined();
  expect(after.state).toBe('downloading');
  // One write: the revision moved once past the warning's, the clock restarted once.
  expect(after.revision).toBe(warned.revision + 1);
  expect(Date.parse(after.progress_at!)).toBeGreaterThan(Date.parse(active.progress_at!));
});
