import { serveUntilSignalled } from '../http';
import { TelegramEmulator } from './emulator';

/**
 * The Telegram emulator as a process (started by `npm start`): PORT,
 * TELEGRAM_BOT_TOKEN (the only token it accepts), and optionally the
 * webhook it delivers Updates to, as if setWebhook had been called.
 */
const token = process.env.TELEGRAM_BOT_TOKEN;
if (!token) throw new Error('TELEGRAM_BOT_TOKEN is required');
const url = process.env.TELEGRAM_WEBHOOK_URL;
const secret = process.env.TELEGRAM_WEBHOOK_SECRET;
serveUntilSignalled(
  'telegram emulator',
  new TelegramEmulator({ token, webhook: url && secret ? { url, secret } : undefined }),
  8081,
);
