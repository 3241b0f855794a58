import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { MAX_BODY_BYTES } from '../../lib/http/request';
import { newId } from '../../lib/ident';
import { v1 } from '../support/downloads';
import { call } from '../support/http';
import { stackClients } from '../support/stack';
import { ALLOWED_USER, chats, messagesAbout, waitFor } from '../support/telegram';

/**
 * Hostile traffic at the Telegram boundary, through serverless offline:
 * the webhook without or with a wrong secret, malformed Updates, oversize
 * bodies, HTML in download names. Each is refused (or handled) clearly,
 * nothing is written or sent, and the bot still answers afterwards.
 */
jest.setTimeout(90_000);
const aws = stackClients();
afterAll(() => aws.dynamodb.destroy());

const secret = () => process.env.TELEGRAM_WEBHOOK_SECRET!;

async function webhook(body: unknown, headers: Record<string, string | undefined>) {
  return call('POST', '/telegram/webhook', body, { authorization: undefined, ...headers });
}

/**
 * What a processed Update about the target could change: its download item, its
 * deliveries, the messages about it. (Scoped to it: other tests' notifications may still arrive.)
 */
async function snapshot(): Promise<string> {
  const scan = async (table: string, filter: string) =>
    (
      await aws.documents.send(
        new ScanCommand({
          TableName: table,
          ConsistentRead: true,
          FilterExpression: filter,
          ExpressionAttributeValues: { ':id': downloadId },
        }),
      )
    ).Items ?? [];
  return JSON.stringify({
    telegram: await scan(process.env.TABLE_TELEGRAM!, 'download_id = :id'),
    download: await scan(process.env.TABLE_DOWNLOADS!, 'id = :id'),
    sent: await messagesAbout(downloadId),
  });
}

let downloadId: string;
beforeAll(async () => {
  const created = await call('POST', '/downloads', { infohashes: [v1().infohash], name: 'target' });
  downloadId = created.body.id;
  await call('POST', `/downloads/${downloadId}/state`, { state: 'failed' });
  // Until every delivery is recorded `sent`: the snapshots below must not see the notifier finishing.
  await waitFor('its notifications, recorded', async () => {
    const { Items = [] } = await aws.documents.send(
      new ScanCommand({
        TableName: process.env.TABLE_TELEGRAM!,
        ConsistentRead: true,
        FilterExpression: 'download_id = :id AND #s = :sent',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':id': downloadId, ':sent': 'sent' },
      }),
    );
    return Items.length === 2 * chats().length;
  });
});

const press = (data: string, from = ALLOWED_USER()) => ({
  update_id: 1,
  callback_query: {
    id: 'q1',
    from: { id: from, is_bot: false, first_name: 'x' },
    chat_instance: '1',
    data,
    message: { message_id: 1, date: 0, chat: { id: chats()[0], type: 'group' } },
  },
});

describe('POST /telegram/webhook', () => {
  it.each([
    ['no secret header', undefined],
    ['a wrong secret', 'x'.repeat(32)],
    ['the secret with one character changed', () => secret().slice(0, -1) + (secret().endsWith('a') ? 'b' : 'a')],
    ['a prefix of the secret', () => secret().slice(0, 8)],
    ['the bearer API token instead', () => process.env.TEST_TOKEN_ALL!],
  ])('refuses %s with 401 and processes nothing', async (_name, presented) => {
    const before = await snapshot();
    const value = typeof presented === 'function' ? presented() : presented;
    const answer = await webhook(press(`v1:r:${downloadId}`), { 'x-telegram-bot-api-secret-token': value });
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('UNAUTHORIZED');
    expect(await snapshot()).toBe(before);
    expect((await call('GET', `/downloads/${downloadId}`)).body.state).toBe('failed');
  });

  it.each([
    ['not JSON', '{"update_id": 1,'],
    ['a JSON array', '[1,2]'],
    ['no update_id', { message: { chat: { id: 1 } } }],
    ['a string update_id', { update_id: '1' }],
    ['a message without a chat id', { update_id: 2, message: { chat: {}, text: '/help' } }],
    [
      'callback data that is not a string',
      { update_id: 3, callback_query: { id: 'q', from: { id: 1 }, data: { $ne: null } } },
    ],
    [
      'a from without an integer id',
      { update_id: 4, callback_query: { id: 'q', from: { id: 'admin' }, data: 'v1:r:x' } },
    ],
    ['JSON nested 40 deep', `{"update_id":5,"x":${'['.repeat(40)}${']'.repeat(40)}}`],
  ])('answers %s with 400 and writes nothing', async (_name, body) => {
    const before = await snapshot();
    const answer = await webhook(body, { 'x-telegram-bot-api-secret-token': secret() });
    expect(answer.status).toBe(400);
    expect(await snapshot()).toBe(before);
  });

  it('refuses an oversize body with 413', async () => {
    const before = await snapshot();
    const answer = await webhook(
      { ...press(`v1:r:${downloadId}`), padding: 'x'.repeat(MAX_BODY_BYTES + 1) },
      { 'x-telegram-bot-api-secret-token': secret() },
    );
    expect(answer.status).toBe(413);
    expect(await snapshot()).toBe(before);
  });

  it('answers an Update of a kind it does not handle with 200 and does nothing', async () => {
    const before = await snapshot();
    expect(
      (
        await webhook(
          { update_id: 6, edited_channel_post: { foo: 1 } },
          { 'x-telegram-bot-api-secret-token': secret() },
        )
      ).status,
    ).toBe(200);
    expect(await snapshot()).toBe(before);
  });

  it('still serves a real press afterwards', async () => {
    const res = await fetch(`${process.env.TELEGRAM_API_ROOT}/emulator/press`, {
      method: 'POST',
      body: JSON.stringify({ chat_id: chats()[0], user_id: ALLOWED_USER(), data: `v1:o:${downloadId}` }),
    });
    expect(((await res.json()) as { answer: { text: string } }).answer.text).toBe('Refreshing…');
  });
});

describe('HTML in download names', () => {
  it('is escaped: Telegram (the emulator) accepts the message and shows the name verbatim', async () => {
    // No "/": download names are file names (lib/names); everything else HTML cares about is here.
    const name = `<b>bold & <a href="x">link <script>alert(1) &amp; ${newId()}`;
    const created = await call('POST', '/downloads', { infohashes: [v1().infohash], name });
    expect(created.status).toBe(201);
    const [message] = await waitFor('the notification', async () => {
      const about = await messagesAbout(created.body.id, chats()[0]);
      return about.length > 0 ? about : undefined;
    });
    expect(message.text).toContain(name);
    expect(message.html).not.toContain('<script>');
    const failures = (await call('GET', '/telegram/failures')).body.items as Array<{ download_id: string }>;
    expect(failures.filter((f) => f.download_id === created.body.id)).toEqual([]);
  });
});
