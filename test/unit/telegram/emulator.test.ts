import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TelegramEmulator } from '../../../emulator/telegram/emulator';

/**
 * What the Telegram emulator does on Telegram's side, against a stand-in
 * webhook on loopback: re-delivery of a slow webhook's Update (same
 * update_id), expiry of an unanswered callback query, per-chat and per-bot
 * 429s with retry_after, a group that migrates.
 */
const token = `123456:${'e'.repeat(30)}`;
let emulator: TelegramEmulator;
let api: string;
let hook: http.Server;
/** What the stand-in webhook does with each Update it gets. */
let onUpdate: (update: { update_id: number; callback_query?: { id: string } }) => Promise<void>;
const seen: number[] = [];

beforeAll(async () => {
  hook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const update = JSON.parse(body);
      seen.push(update.update_id);
      void onUpdate(update).then(() => res.writeHead(200).end('{}'));
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
  emulator = new TelegramEmulator({
    token,
    webhook: { url, secret: 's'.repeat(20) },
    webhookTimeoutMs: 1000,
    redeliverAfterMs: 50,
    maxDeliveries: 3,
    callbackTtlMs: 1500,
    limits: { chatPerSecond: 1, groupPerMinute: 3, botPerSecond: 4 },
  });
  api = await emulator.listen();
});
afterAll(async () => {
  hook.closeAllConnections();
  await new Promise((r) => hook.close(r));
  await emulator.close();
});
beforeEach(() => {
  seen.length = 0;
});

const call = async (method: string, params: unknown) =>
  (await (
    await fetch(`${api}/bot${token}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
    })
  ).json()) as { ok: boolean; error_code?: number; description?: string; parameters?: Record<string, number> };
const control = async (method: string, path: string, body?: unknown) =>
  (await (
    await fetch(`${api}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) })
  ).json()) as Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhook re-delivery', () => {
  it('delivers the same update_id again while the webhook is slower than its timeout', async () => {
    let calls = 0;
    onUpdate = async () => {
      calls += 1;
      if (calls === 1) await sleep(2000);
    };
    const pressed = await control('POST', '/emulator/press', { chat_id: 5, user_id: 5, data: 'x' });
    expect(pressed).toMatchObject({ status: 200, deliveries: 2 });
    expect(seen).toEqual([pressed.update_id, pressed.update_id]);
  });

  it('delivers once to a webhook that answers in time', async () => {
    onUpdate = async () => undefined;
    expect(await control('POST', '/emulator/type', { chat_id: 5, user_id: 5, text: 'hi' })).toMatchObject({
      deliveries: 1,
    });
    expect(seen).toHaveLength(1);
  });
});

describe('callback queries', () => {
  it('are answered while fresh, and refused once expired', async () => {
    onUpdate = async (u) => {
      await call('answerCallbackQuery', { callback_query_id: u.callback_query!.id, text: 'ok' });
    };
    const fresh = await control('POST', '/emulator/press', { chat_id: 5, user_id: 5, data: 'x' });
    expect(fresh.answer).toEqual({ text: 'ok' });
    expect(fresh.answered_after_ms).toBeLessThan(1500);

    let late: Awaited<ReturnType<typeof call>> | undefined;
    onUpdate = async (u) => {
      await sleep(1700);
      late = await call('answerCallbackQuery', { callback_query_id: u.callback_query!.id, text: 'late' });
    };
    await control('PUT', '/emulator/webhook', { timeout_ms: 5000 });
    const stale = await control('POST', '/emulator/press', { chat_id: 5, user_id: 5, data: 'x' });
    await control('PUT', '/emulator/webhook', { timeout_ms: 1000 });
    expect(stale.answer).toBeNull();
    expect(late).toMatchObject({ ok: false, error_code: 400, description: expect.stringMatching(/query is too old/) });
  });
});

describe('rates', () => {
  afterEach(() => control('DELETE', '/emulator/faults'));

  it('answers 429 with retry_after past one message a second to a chat, and counts a send inside it', async () => {
    expect((await call('sendMessage', { chat_id: 77, text: 'a' })).ok).toBe(true);
    const limited = await call('sendMessage', { chat_id: 77, text: 'b' });
    expect(limited).toMatchObject({ ok: false, error_code: 429, parameters: { retry_after: 1 } });
    await call('sendMessage', { chat_id: 77, text: 'c' }); // inside the retry_after: unhonoured
    expect(emulator.stats.get(77)).toMatchObject({ sent: 1, limited: 2, unhonoured: 1 });
    await sleep(1050);
    expect((await call('sendMessage', { chat_id: 77, text: 'd' })).ok).toBe(true);
  });

  it('answers 429 past the per-minute budget of a group', async () => {
    for (let i = 0; i < 3; i += 1) {
      expect((await call('sendMessage', { chat_id: -88, text: `g${i}` })).ok).toBe(true);
      await sleep(1010);
    }
    const limited = await call('sendMessage', { chat_id: -88, text: 'g3' });
    expect(limited.error_code).toBe(429);
    expect(limited.parameters!.retry_after).toBeGreaterThanOrEqual(56);
  });

  it('answers 429 past the per-bot rate, whatever the chat', async () => {
    await sleep(1000);
    // At once (sequential calls on a loaded machine could spread past the second).
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => call('sendMessage', { chat_id: 1000 + i, text: 'x' })),
    );
    expect(answers.filter((a) => a.ok)).toHaveLength(4);
    expect(answers.filter((a) => a.error_code === 429)).toHaveLength(2);
  });
});

type MigrationUpdate = {
  message?: { chat: { id: number }; migrate_to_chat_id?: number; migrate_from_chat_id?: number };
};

describe('a group that migrates', () => {
  it('answers 400 with migrate_to_chat_id, and announces the move in both chats', async () => {
    const announced: MigrationUpdate[] = [];
    onUpdate = async (update) => void announced.push(update as MigrationUpdate);
    await sleep(1000); // past the bot's budget spent above
    const moved = await control('POST', '/emulator/migrate', { chat_id: -99, user_id: 5 });
    expect(moved).toMatchObject({ from: -99, to: -10099, status: 200 });
    const refused = await call('sendMessage', { chat_id: -99, text: 'x' });
    expect(refused).toMatchObject({ ok: false, error_code: 400, parameters: { migrate_to_chat_id: -10099 } });
    // The old group is told where it went, then the new one where it came from (message.d.ts migrate_*).
    expect(
      announced.map((u) => [u.message?.chat.id, u.message?.migrate_to_chat_id, u.message?.migrate_from_chat_id]),
    ).toEqual([
      [-99, -10099, undefined],
      [-10099, undefined, -99],
    ]);
    expect((await call('sendMessage', { chat_id: -10099, text: 'y' })).ok).toBe(true);
  });
});

describe('method names', () => {
  it('are case-insensitive, as the Bot API says (api.d.ts); an unknown one is 404', async () => {
    expect(await call('GETME', {})).toMatchObject({ ok: true });
    expect(await call('getme', {})).toMatchObject({ ok: true });
    expect(await call('getMeNot', {})).toMatchObject({ ok: false, error_code: 404, description: 'Not Found' });
  });
});
