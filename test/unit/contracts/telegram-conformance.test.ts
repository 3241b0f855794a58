import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TelegramEmulator } from '../../../emulator/telegram/emulator';
import { BotApiTypes, type CheckResult } from '../../support/bot-api-types';

/**
 * The Telegram emulator against the official Bot API typings
 * (`@grammyjs/types`, the version grammY ships): every method it implements
 * answers `{ok: true, result}` with the type methods.d.ts `ApiMethods` gives
 * that method, every refusal is api.d.ts `ApiError`, and every Update it
 * delivers is update.d.ts `Update` (a typed command, a group's move, presses
 * on a message the bot can reach and on one it cannot, whose message must be
 * an `InaccessibleMessage` and nothing more). An edit's result must carry
 * `edit_date` (`Update.Edited` in the method's return type). The checker itself is shown to fail on a bogus field, a
 * dropped required one and a wrong literal, so the figures cannot be empty.
 */
const types = new BotApiTypes();
const token = `123456:${'c'.repeat(30)}`;
const PRIVATE = 4242;
const GROUP = -5005;
const SUPERGROUP = -1005005;
let emulator: TelegramEmulator;
let api: string;
let hook: http.Server;
const updates: Array<Record<string, unknown>> = [];

/** Every check made, by what was checked: the figures of the closing note. */
const results: Array<{ what: string; result: CheckResult }> = [];

beforeAll(async () => {
  hook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      updates.push(JSON.parse(body));
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  emulator = new TelegramEmulator({ token, limits: null });
  api = await emulator.listen();
});
afterAll(async () => {
  hook.closeAllConnections();
  await new Promise((r) => hook.close(r));
  await emulator.close();
  const checks = results.reduce((n, r) => n + r.result.checks, 0);
  const mismatches = results.reduce((n, r) => n + r.result.mismatches.length, 0);
  const named = new Set(results.flatMap((r) => [...r.result.types]));
  console.log(
    `telegram conformance (@grammyjs/types ${types.version}): ${results.length} answers and updates, ` +
      `${checks} checks over ${named.size} types, mismatches ${mismatches}`,
  );
});

async function call(method: string, params: unknown, tokenUsed = token) {
  const res = await fetch(`${api}/bot${tokenUsed}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
const control = async (method: string, path: string, body?: unknown) =>
  (await (
    await fetch(`${api}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  ).json()) as Record<string, unknown>;

/** Checks a value and records the figures; the test fails on any mismatch, with all of them shown. */
function conforms(what: string, value: unknown, type: ReturnType<BotApiTypes['type']>): CheckResult {
  const result = types.check(value, type);
  results.push({ what, result });
  expect({ what, mismatches: result.mismatches }).toEqual({ what, mismatches: [] });
  return result;
}

/** A success: exactly `{ok: true, result}`, the result of the type ApiMethods gives the method. */
async function succeeds(method: string, params: unknown) {
  const { status, body } = await call(method, params);
  expect(status).toBe(200);
  expect(Object.keys(body).sort()).toEqual(['ok', 'result']);
  expect(body.ok).toBe(true);
  conforms(`${method} → ${types.show(types.result(method))}`, body.result, types.result(method));
  return body.result as Record<string, unknown>;
}

async function refused(what: string, method: string, params: unknown, code: number, tokenUsed?: string) {
  const { status, body } = await call(method, params, tokenUsed);
  expect([status, body.error_code]).toEqual([code, code]);
  conforms(`${what} → ApiError`, body, types.type('ApiError'));
  return body;
}

const keyboard = {
  inline_keyboard: [
    [
      { text: 'Retry', callback_data: 'v1:r:x' },
      { text: 'Web', url: 'https://e.x' },
    ],
  ],
};
const card =
  '<b>Sintel &lt;4K&gt;</b>\nstate: <b>failed</b>\n<code>c12f</code> <a href="https://ui.example/r?a=1&amp;b=2">Review</a>';

describe('the Telegram emulator answers as @grammyjs/types says', () => {
  let sent: Record<string, unknown>;

  it('setWebhook, getMe', async () => {
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    expect(await succeeds('setWebhook', { url, secret_token: 's'.repeat(20) })).toBe(true);
    const me = await succeeds('getMe', {});
    expect(me.is_bot).toBe(true);
  });

  it('sendMessage to a private chat, a group and a supergroup; editMessageText and editMessageReplyMarkup', async () => {
    sent = await succeeds('sendMessage', {
      chat_id: PRIVATE,
      text: card,
      parse_mode: 'HTML',
      reply_markup: keyboard,
      link_preview_options: { is_disabled: true },
    });
    expect(sent.entities).toEqual([
      { type: 'bold', offset: 0, length: 11 },
      { type: 'bold', offset: 19, length: 6 },
      { type: 'code', offset: 26, length: 4 },
      { type: 'text_link', offset: 31, length: 6, url: 'https://ui.example/r?a=1&b=2' },
    ]);
    for (const chat of [GROUP, SUPERGROUP]) await succeeds('sendMessage', { chat_id: chat, text: 'plain' });
    expect(sent.edit_date).toBeUndefined();

    const edited = await succeeds('editMessageText', {
      chat_id: PRIVATE,
      message_id: sent.message_id,
      text: `${card}\n<i>Retry started.</i>`,
      parse_mode: 'HTML',
      reply_markup: keyboard,
    });
    // Optional in the typings, always there on an edited message (message.d.ts `edit_date`).
    expect(edited.edit_date).toEqual(expect.any(Number));
    expect(edited.edit_date as number).toBeGreaterThanOrEqual(sent.date as number);
    const unmarked = await succeeds('editMessageReplyMarkup', {
      chat_id: PRIVATE,
      message_id: sent.message_id,
      reply_markup: { inline_keyboard: [] },
    });
    expect(unmarked.edit_date).toEqual(expect.any(Number));
  });

  it('the Updates: a command, presses on a reachable, an inaccessible and a deleted message, a group move', async () => {
    const group = (await call('sendMessage', { chat_id: GROUP, text: 'card', reply_markup: keyboard })).body.result as {
      message_id: number;
    };
    updates.length = 0;
    await control('POST', '/emulator/type', { chat_id: GROUP, user_id: 7, text: '/find sintel' });
    await control('POST', '/emulator/press', { chat_id: GROUP, user_id: 7, message_id: group.message_id, data: 'x' });
    const press = updates[1].callback_query as { id: string; message: Record<string, unknown> };
    expect(await succeeds('answerCallbackQuery', { callback_query_id: press.id, text: 'Retrying…' })).toBe(true);
    await control('POST', '/emulator/press', {
      chat_id: GROUP,
      user_id: 7,
      message_id: group.message_id,
      data: 'x',
      inaccessible: true,
    });
    await control('DELETE', `/emulator/messages?chat_id=${GROUP}&message_id=${group.message_id}`);
    await control('POST', '/emulator/press', { chat_id: GROUP, user_id: 7, message_id: group.message_id, data: 'x' });
    await control('POST', '/emulator/migrate', { chat_id: -7007, user_id: 7 });
    await control('DELETE', '/emulator/migrate?chat_id=-7007');

    expect(updates.map((u) => Object.keys(u).sort().join(','))).toEqual([
      'message,update_id',
      'callback_query,update_id',
      'callback_query,update_id',
      'callback_query,update_id',
      'message,update_id',
      'message,update_id',
    ]);
    for (const [i, update] of updates.entries()) conforms(`Update #${i}`, update, types.type('Update'));
    expect(press.message.date).not.toBe(0);
    for (const update of updates.slice(2, 4)) {
      const message = (update.callback_query as { message: Record<string, unknown> }).message;
      conforms('callback_query.message → InaccessibleMessage', message, types.type('InaccessibleMessage'));
      expect(message).toEqual({ chat: expect.any(Object), message_id: group.message_id, date: 0 });
    }
  });

  it('a document Update, getFile and the file download; getFile refuses an unknown id and a file over 20 MB', async () => {
    updates.length = 0;
    const content = Buffer.from('d4:infod6:lengthi1e4:name1:x12:piece lengthi16384e6:pieces20:aaaaaaaaaaaaaaaaaaaaee');
    const sent = await control('POST', '/emulator/document', {
      chat_id: PRIVATE,
      user_id: 7,
      file_name: 'Sintel.torrent',
      mime_type: 'application/x-bittorrent',
      content_base64: content.toString('base64'),
      caption: 'magnet:?xt=urn:btih:x',
    });
    expect(updates).toHaveLength(1);
    conforms('Update (a document with a caption)', updates[0], types.type('Update'));
    const document = (updates[0].message as { document: Record<string, unknown> }).document;
    expect(document).toMatchObject({ file_id: sent.file_id, file_name: 'Sintel.torrent', file_size: content.length });
    const file = await succeeds('getFile', { file_id: sent.file_id });
    expect(file).toMatchObject({ file_id: sent.file_id, file_size: content.length });
    const link = await fetch(`${api}/file/bot${token}/${String(file.file_path)}`);
    expect([link.status, link.headers.get('content-length')]).toEqual([200, String(content.length)]);
    expect(Buffer.from(await link.arrayBuffer())).toEqual(content);
    // Another token, another path: the Bot API's 404.
    for (const path of [`/file/bot9:${'x'.repeat(30)}/${String(file.file_path)}`, `/file/bot${token}/documents/nope`]) {
      const missing = await fetch(`${api}${path}`);
      expect(missing.status).toBe(404);
      conforms('a file link that names nothing → ApiError', await missing.json(), types.type('ApiError'));
    }
    await refused('an unknown file_id', 'getFile', { file_id: 'AgADnope' }, 400);
    const big = await control('POST', '/emulator/document', {
      chat_id: PRIVATE,
      user_id: 7,
      size: 20 * 1024 * 1024 + 1,
    });
    const tooBig = await refused('a file over 20 MB', 'getFile', { file_id: big.file_id }, 400);
    expect(tooBig.description).toBe('Bad Request: file is too big');
  });

  it('the refusals', async () => {
    await refused('a wrong token', 'getMe', {}, 401, `9:${'x'.repeat(30)}`);
    await refused('an unknown method', 'sendDice', { chat_id: PRIVATE }, 404);
    await refused('an empty text', 'sendMessage', { chat_id: PRIVATE, text: '' }, 400);
    await refused('unbalanced HTML', 'sendMessage', { chat_id: PRIVATE, text: '<b>x', parse_mode: 'HTML' }, 400);
    await refused('an edit of no message', 'editMessageText', { chat_id: PRIVATE, message_id: 999, text: 'x' }, 400);
    await refused(
      'an unchanged edit',
      'editMessageReplyMarkup',
      { chat_id: PRIVATE, message_id: sent.message_id, reply_markup: { inline_keyboard: [] } },
      400,
    );
    await refused('an unknown query', 'answerCallbackQuery', { callback_query_id: 'nope' }, 400);
    await control('PUT', '/emulator/faults', { chat_id: PRIVATE, fault: '429', count: 1, retry_after: 1 });
    const flood = await refused('a flood', 'sendMessage', { chat_id: PRIVATE, text: 'x' }, 429);
    expect(flood.parameters).toEqual({ retry_after: 1 });
    await control('DELETE', '/emulator/faults');
    await control('POST', '/emulator/migrate', { chat_id: GROUP, announce: false });
    const moved = await refused('a moved group', 'sendMessage', { chat_id: GROUP, text: 'x' }, 400);
    expect(moved.parameters).toEqual({ migrate_to_chat_id: Number(`-100${-GROUP}`) });
    await control('DELETE', `/emulator/migrate?chat_id=${GROUP}`);
    expect(await succeeds('deleteWebhook', {})).toBe(true);
  });

  it('checked enough to mean something: every method, the floors of checks and types', () => {
    const methods = new Set(results.map((r) => r.what.split(' ')[0]).filter((w) => /^[a-z]+[A-Z]/.test(w)));
    expect([...methods].sort()).toEqual([
      'answerCallbackQuery',
      'deleteWebhook',
      'editMessageReplyMarkup',
      'editMessageText',
      'getFile',
      'getMe',
      'sendMessage',
      'setWebhook',
    ]);
    const checks = results.reduce((n, r) => n + r.result.checks, 0);
    const named = new Set(results.flatMap((r) => [...r.result.types]));
    expect(checks).toBeGreaterThanOrEqual(250);
    for (const name of ['UserFromGetMe', 'Message', 'InaccessibleMessage', 'CallbackQuery', 'Update', 'ApiError'])
      expect(named).toContain(name);
  });
});

describe('the checker fails when it should', () => {
  const me = { ...emulatorBot() };
  const problems = (value: unknown, name: string) => types.check(value, types.type(name)).mismatches;

  it('a bogus field, a dropped required field, a wrong primitive, a wrong literal', () => {
    expect(problems(me, 'UserFromGetMe')).toEqual([]);
    expect(problems({ ...me, bogus: 1 }, 'UserFromGetMe')).toEqual([{ at: '$.bogus', problem: expect.any(String) }]);
    const { can_manage_bots: _dropped, ...without } = me;
    expect(problems(without, 'UserFromGetMe')).toEqual([{ at: '$.can_manage_bots', problem: 'missing' }]);
    expect(problems({ ...me, id: '1' }, 'UserFromGetMe')).toEqual([{ at: '$.id', problem: 'not a number' }]);
    expect(problems({ ...me, is_bot: false }, 'UserFromGetMe')).toHaveLength(1);
  });

  it("the emulator's old answers: getMe without six fields, a press on a deleted message as an empty message", () => {
    const old = Object.fromEntries(Object.entries(me).slice(0, 7));
    expect(problems(old, 'UserFromGetMe').map((m) => m.at)).toEqual([
      '$.can_connect_to_business',
      '$.has_main_web_app',
      '$.has_topics_enabled',
      '$.allows_users_to_create_topics',
      '$.can_manage_bots',
      '$.supports_join_request_queries',
    ]);
    const chat = { id: -5, type: 'group', title: 'g' };
    expect(problems({ message_id: 1, date: 1_700_000_000, chat, text: '' }, 'InaccessibleMessage')).toEqual([
      { at: '$.date', problem: '1700000000 is not 0' },
      { at: '$.text', problem: expect.any(String) },
    ]);
    expect(problems({ chat: { ...chat, first_name: 'x' }, message_id: 1, date: 0 }, 'InaccessibleMessage')).toEqual([
      { at: '$.chat.first_name', problem: expect.stringMatching(/never sent/) },
    ]);
  });
});

function emulatorBot(): Record<string, unknown> {
  return { ...new TelegramEmulator({ token }).me };
}
