import type { Update, UserFromGetMe } from 'grammy/types';
import { createBot, BotDeps } from '../../../lib/telegram/bot';
import { type Download, isActive } from '../../../lib/downloads/model';
import type { DownloadStore } from '../../../lib/downloads/store';
import type { TorrentClient } from '../../../lib/torrents/client';
import { silentLogger } from '../../../lib/log';
import type { Lang } from '../../../lib/i18n';
import { EMULATED_BOT } from '../../../emulator/telegram/objects';

/**
 * The bot in-process, its Bot API calls answered here and recorded, its
 * stores fakes that count every write: what a press reads, writes and says,
 * without the stack.
 */
/** The emulator's getMe, typed: tsc holds it to every field `UserFromGetMe` requires. */
export const ME: UserFromGetMe = { ...EMULATED_BOT, id: 1, first_name: 'bot', username: 'test_bot' };

export const CHAT = -1001001;
export const ALLOWED = 4242;
export const MEMBER = 777;
export const ID = '01jf0000000000000000000000';

export interface Harness {
  handle(update: Update): Promise<void>;
  calls: Array<{ method: string; payload: Record<string, unknown> }>;
  writes: string[];
  download: Download | undefined;
  /** The store's read fails (DynamoDB down). */
  readFails?: boolean;
  /** Bot API methods Telegram refuses, with its 400 description. */
  refused: Record<string, string>;
  /** Each chat's /lang choice (the store's items). */
  languages: Map<number, Lang>;
  /** The update ledger's items, with the store's rules (lib/telegram/dynamodb-store.ts). */
  ledger: Map<number, { status: 'handling' | 'done'; leaseUntil: number }>;
  /** The bot's clock (epoch ms). */
  clock: number;
  /** The store's read never answers (DynamoDB Local paused; the invocation dies in it). */
  readStalls?: boolean;
  /** The ledger's claim is applied but its answer lost (a timeout while DynamoDB Local was paused). */
  claimAnswerLost?: boolean;
  /** The torrent client's add never answers (the invocation dies in it, after the create). */
  addStalls?: boolean;
  /** getFile's answer (`file_size`), and the file link's fetch (default: 404). */
  file: { size?: number; path: string };
  fetchFile: (url: string) => Promise<Response>;
  /** The file links fetched. */
  fetched: string[];
}

export function harness(
  download?: Partial<Download>,
  users: number[] = [ALLOWED],
  locale: BotDeps['locale'] = { timeZone: 'UTC' },
): Harness {
  const h: Harness = {
    calls: [],
    writes: [],
    download: download
      ? {
          id: ID,
          state: 'failed',
          name: 'clip',
          infohashes: [{ infohash: 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a', kind: 'v1' }],
          created_at: '2026-12-06T00:00:00.000Z',
          updated_at: '2026-12-06T00:00:00.000Z',
          revision: 1,
          ...download,
        }
      : undefined,
    handle: async () => undefined,
    refused: {},
    languages: new Map(),
    ledger: new Map(),
    clock: Date.now(),
    file: { path: 'documents/file_1.torrent' },
    fetchFile: async () => new Response('Not Found', { status: 404 }),
    fetched: [],
  };
  const write =
    <T>(name: string, f: () => T) =>
    async () => {
      h.writes.push(name);
      return f();
    };
  const store = {
    // The store's guard, for one download: an active one holding a hash is the answer, else a new one.
    createDownloadIfNoActive: async (input: Partial<Download>, hashes: Download['infohashes']) => {
      const d = h.download;
      if (d && isActive(d.state) && d.infohashes.some((x) => hashes.some((y) => y.infohash === x.infohash)))
        return { created: false, download: d };
      h.writes.push('create');
      h.download = {
        id: ID,
        state: 'queued',
        name: String(input.name),
        infohashes: hashes,
        created_at: '2026-12-07T00:00:00.000Z',
        updated_at: '2026-12-07T00:00:00.000Z',
        revision: 1,
      };
      return { created: true, download: h.download };
    },
    get: async () => {
      if (h.readStalls) await new Promise(() => undefined);
      if (h.readFails) throw new Error('store unavailable');
      return h.download;
    },
    activateIfNoOtherActive: write('activate', () => (h.download = { ...h.download!, state: 'queued' })),
    // The store's CAS on the warning: only a press that finds it clears it (and restarts the clock).
    keepWaiting: async () => {
      const d = h.download!;
      if (!d.warning) return d;
      h.writes.push('keep');
      const { warning: _w, warned_at: _wa, ...rest } = d;
      return (h.download = { ...rest, progress_at: new Date(h.clock).toISOString(), revision: d.revision + 1 });
    },
    setDownloadState: async (_id: string, _from: string, to: Download['state']) => {
      h.writes.push(`state:${to}`);
      return (h.download = { ...h.download!, state: to });
    },
  } as unknown as DownloadStore;
  const torrents = {
    add: async () => {
      h.writes.push('torrent_add');
      if (h.addStalls) await new Promise(() => undefined);
    },
    remove: write('torrent_remove', () => undefined),
    stop: write('torrent_stop', () => undefined),
  } as unknown as TorrentClient;
  const deps: BotDeps = {
    client: { token: '1:test', timeoutMs: 1000, apiRoot: 'http://bot-api.test' },
    fetchFile: (async (url: string) => {
      h.fetched.push(url);
      return h.fetchFile(url);
    }) as typeof fetch,
    downloads: { store, torrents, log: silentLogger },
    access: { chats: [CHAT], users: new Set(users) },
    updates: {
      begin: async (updateId, now, leaseUntil) => {
        h.writes.push(`update:${updateId}`);
        const item = h.ledger.get(updateId);
        if (item && (item.status === 'done' || item.leaseUntil >= now)) return item.status === 'done' ? 'done' : 'busy';
        h.ledger.set(updateId, { status: 'handling', leaseUntil });
        if (h.claimAnswerLost) throw new Error('TimeoutError: the request exceeded its 2500 ms requestTimeout');
        return 'first';
      },
      finish: async (updateId) => void h.ledger.set(updateId, { status: 'done', leaseUntil: 0 }),
      abandon: async (updateId) => {
        const item = h.ledger.get(updateId);
        if (item?.status === 'handling') item.leaseUntil = 0;
      },
    },
    moves: { moves: async () => new Map(), recordMove: write('move', () => undefined) },
    languages: {
      languageOf: async (chat) => h.languages.get(chat),
      languages: async () => new Map(h.languages),
      setLanguage: async (chat, lang) => {
        h.writes.push(`lang:${chat}:${lang}`);
        h.languages.set(chat, lang);
      },
    },
    locale,
    uiBase: 'https://ui.example',
    log: silentLogger,
    botInfo: ME,
    now: () => h.clock,
  };
  const bot = createBot(deps);
  bot.api.config.use(async (_prev, method, payload) => {
    h.calls.push({ method, payload: payload as Record<string, unknown> });
    if (h.refused[method]) return { ok: false, error_code: 400, description: h.refused[method] } as never;
    const result =
      method === 'answerCallbackQuery'
        ? true
        : method === 'getFile'
          ? {
              file_id: 'f',
              file_unique_id: 'u',
              file_path: h.file.path,
              ...(h.file.size !== undefined ? { file_size: h.file.size } : {}),
            }
          : { message_id: 99, date: 1_700_000_000, chat: { id: CHAT, type: 'supergroup', title: 'g' }, text: 'x' };
    return { ok: true, result } as never;
  });
  h.handle = (update) => bot.handleUpdate(update);
  return h;
}

let nextUpdate = 1;

/** A press on a message the bot sent (accessible), or on one it can no longer reach (`date: 0`). */
export function press(
  data: string,
  from: number,
  opts: { chat?: number; inaccessible?: boolean; languageCode?: string } = {},
): Update {
  const chat = { id: opts.chat ?? CHAT, type: 'supergroup' as const, title: 'g' };
  return {
    update_id: nextUpdate++,
    callback_query: {
      id: `q${nextUpdate}`,
      from: person(from, opts.languageCode),
      chat_instance: 'ci',
      data,
      message: opts.inaccessible
        ? { chat, message_id: 5, date: 0 }
        : { chat, message_id: 5, date: 1_700_000_000, text: 'card', from: ME },
    },
  } as Update;
}

/** A person as Telegram describes them; `language_code` is their app's language, when it says. */
const person = (id: number, languageCode?: string) => ({
  id,
  is_bot: false,
  first_name: 'p',
  ...(languageCode ? { language_code: languageCode } : {}),
});

export function command(text: string, from: number, chat = CHAT, languageCode?: string): Update {
  return {
    update_id: nextUpdate++,
    message: {
      message_id: nextUpdate,
      date: 1_700_000_000,
      chat: { id: chat, type: 'supergroup', title: 'g' },
      from: person(from, languageCode),
      text,
      entities: [{ type: 'bot_command', offset: 0, length: text.split(' ')[0].length }],
    },
  } as Update;
}

/** A message a person typed (no command), or sent as a document with its caption. */
export function message(
  fields: { text?: string; document?: Record<string, unknown>; caption?: string },
  from: number,
  chat = CHAT,
  languageCode?: string,
): Update {
  return {
    update_id: nextUpdate++,
    message: {
      message_id: nextUpdate,
      date: 1_700_000_000,
      chat: { id: chat, type: 'supergroup', title: 'g' },
      from: person(from, languageCode),
      ...fields,
    },
  } as Update;
}
