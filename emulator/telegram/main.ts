import { serveUntilSignalled } from '../http';
import { RateLimits, TelegramEmulator } from './emulator';

/**
 * The Telegram emulator as a process (started by `npm start`): PORT,
 * TELEGRAM_BOT_TOKEN (the only token it accepts), and optionally the
 * webhook it delivers Updates to, as if setWebhook had been called.
 * TELEGRAM_EMULATOR_LIMITS `chat=1,group=20,bot=30` (Telegram's, the default)
 * or `off`: the rates it answers 429 over.
 */
const token = process.env.TELEGRAM_BOT_TOKEN;
if (!token) throw new Error('TELEGRAM_BOT_TOKEN is required');
const url = process.env.TELEGRAM_WEBHOOK_URL;
const secret = process.env.TELEGRAM_WEBHOOK_SECRET;
const limitsText = process.env.TELEGRAM_EMULATOR_LIMITS?.trim();
const limits: RateLimits | null | undefined =
  limitsText === 'off'
    ? null
    : limitsText
      ? Object.fromEntries(
          limitsText.split(',').map((part) => {
            const [name, value] = part.split('=');
            const key = { chat: 'chatPerSecond', group: 'groupPerMinute', bot: 'botPerSecond' }[name.trim()];
            if (!key || !/^\d+$/.test(value?.trim() ?? ''))
              throw new Error(`TELEGRAM_EMULATOR_LIMITS: cannot read ${part}`);
            return [key, Number(value)];
          }),
        )
      : undefined;
serveUntilSignalled(
  'telegram emulator',
  new TelegramEmulator({ token, webhook: url && secret ? { url, secret } : undefined, limits }),
  8081,
);
