import { Env, EnvReader } from '../config/env';
import { RESOURCE_NAME } from '../config';

/** The Telegram bot and its notifications (telegram functions only). */
export interface TelegramConfig {
  /** False without a bot token: the notifier skips, the webhook answers 503. */
  enabled: boolean;
  token: string;
  /** A local Bot API server (the emulator); unset: Telegram's own. */
  apiRoot?: string;
  /**
   * Only the webhook checks it, so only the webhook function is given it (decision 293): optional here,
   * '' when absent; the webhook refuses every Update while it is ''.
   */
  webhookSecret: string;
  /** Where notifications go; these chats may also press buttons and type commands. */
  chats: number[];
  /** Users served in any chat (e.g. private chats with the bot). */
  users: number[];
  table: string;
  /** Base URL of the web UI: messages link to <base>/review/{id} and <base>/download/{id}. */
  publicUiUrl: string;
  timeoutMs: number;
  sendAttempts: number;
  sendBoundMs: number;
  /** Telegram's send rates the notifier keeps (lib/telegram/pacer.ts); the stack speeds them up with its emulator. */
  pace: { chatGapMs: number; groupPerMinute: number; botPerSecond: number };
}

// Telegram's rule for secret_token: 1-256 of A-Za-z0-9_-.
const WEBHOOK_SECRET = /^[A-Za-z0-9_-]{16,256}$/;
const BOT_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/;

export function loadTelegramConfig(env: Env = process.env): TelegramConfig {
  const r = new EnvReader(env);
  const enabled = r.has('TELEGRAM_BOT_TOKEN');
  const config: TelegramConfig = {
    enabled,
    token: enabled
      ? r.string('TELEGRAM_BOT_TOKEN', { pattern: BOT_TOKEN, hint: 'a bot token <digits>:<secret>', secret: true })
      : '',
    apiRoot: r.url('TELEGRAM_API_ROOT', ['http', 'https'], { optional: true }),
    webhookSecret: r.has('TELEGRAM_WEBHOOK_SECRET')
      ? r.string('TELEGRAM_WEBHOOK_SECRET', {
          pattern: WEBHOOK_SECRET,
          hint: '16-256 characters of A-Za-z0-9_-',
          secret: true,
        })
      : '',
    chats: idList(r, 'TELEGRAM_CHAT_IDS', env),
    users: idList(r, 'TELEGRAM_ALLOWED_USER_IDS', env),
    table: r.string('TABLE_TELEGRAM', { pattern: RESOURCE_NAME, hint: 'a DynamoDB table name' }),
    publicUiUrl: r.url('PUBLIC_UI_URL', ['http', 'https'], { default: 'http://127.0.0.1:3000' }),
    timeoutMs: r.int('TELEGRAM_TIMEOUT_MS', { default: 5000, min: 500, max: 30000 }),
    sendAttempts: r.int('TELEGRAM_SEND_ATTEMPTS', { default: 6, min: 1, max: 20 }),
    sendBoundMs: r.int('TELEGRAM_SEND_BOUND_MS', { default: 45000, min: 1000, max: 600000 }),
    pace: {
      chatGapMs: r.int('TELEGRAM_CHAT_GAP_MS', { default: 1000, min: 0, max: 60000 }),
      groupPerMinute: r.int('TELEGRAM_GROUP_PER_MINUTE', { default: 20, min: 1, max: 100000 }),
      botPerSecond: r.int('TELEGRAM_BOT_PER_SECOND', { default: 30, min: 1, max: 1000 }),
    },
  };
  if (enabled && config.chats.length === 0)
    r.refuse('TELEGRAM_CHAT_IDS', 'is required with TELEGRAM_BOT_TOKEN (comma-separated chat ids)');
  r.done();
  return config;
}

function idList(r: EnvReader, name: string, env: Env): number[] {
  const text = env[name]?.trim();
  if (!text) return [];
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.every((s) => /^-?\d{1,16}$/.test(s))) {
    r.refuse(name, `must be comma-separated integer ids, got ${JSON.stringify(text)}`);
    return [];
  }
  return items.map(Number);
}
