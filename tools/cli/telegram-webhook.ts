import { Api } from 'grammy';
import { ConfigError } from '../../lib/config';
import { EnvReader, type Env } from '../../lib/config/env';

/**
 * `npm run telegram:webhook`: registers the deployed webhook with Telegram
 * (setWebhook with the secret, only the Update kinds the bot handles).
 *   TELEGRAM_BOT_TOKEN, TELEGRAM_WEBHOOK_SECRET, TELEGRAM_WEBHOOK_URL (https://…/telegram/webhook)
 *   TELEGRAM_API_ROOT  optional (a local Bot API server)
 *   `-- --delete`      removes the webhook instead
 */

export const ALLOWED_UPDATES = ['message', 'callback_query'] as const;

export async function registerWebhook(env: Env, remove = false): Promise<string> {
  const r = new EnvReader(env);
  const token = r.string('TELEGRAM_BOT_TOKEN', {
    pattern: /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/,
    hint: 'a bot token',
    secret: true,
  });
  const apiRoot = r.url('TELEGRAM_API_ROOT', ['http', 'https'], { optional: true });
  const url = remove ? '' : r.url('TELEGRAM_WEBHOOK_URL', ['https', 'http']);
  const secret = remove
    ? ''
    : r.string('TELEGRAM_WEBHOOK_SECRET', {
        pattern: /^[A-Za-z0-9_-]{16,256}$/,
        hint: '16-256 characters of A-Za-z0-9_-',
        secret: true,
      });
  r.done();
  const api = new Api(token, apiRoot ? { apiRoot } : undefined);
  if (remove) {
    await api.deleteWebhook();
    return 'webhook deleted';
  }
  if (!url.endsWith('/telegram/webhook'))
    throw new ConfigError([`TELEGRAM_WEBHOOK_URL must end with /telegram/webhook, got ${JSON.stringify(url)}`]);
  await api.setWebhook(url, { secret_token: secret, allowed_updates: [...ALLOWED_UPDATES] });
  return `webhook set: ${url} (secret header on, updates: ${ALLOWED_UPDATES.join(', ')})`;
}

if (require.main === module) {
  registerWebhook(process.env, process.argv.includes('--delete')).then(
    (line) => process.stdout.write(`${line}\n`),
    (err) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
