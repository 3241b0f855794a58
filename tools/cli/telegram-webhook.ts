import { Api } from 'grammy';
import { ConfigError } from '../../lib/config';
import { EnvReader, type Env } from '../../lib/config/env';
import { cliSpec, runCli } from './run';

/**
 * `npm run telegram:webhook -- --help`: registers the deployed webhook with
 * Telegram (setWebhook with the secret, only the Update kinds the bot handles).
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

export const WEBHOOK_CLI = cliSpec({
  usage: `usage: npm run telegram:webhook [-- --delete]

Registers the deployed webhook with Telegram (setWebhook with the secret header,
only the update kinds the bot handles: ${ALLOWED_UPDATES.join(', ')}).

  --delete  removes the webhook instead
  --help    this text

Environment: TELEGRAM_BOT_TOKEN, TELEGRAM_WEBHOOK_URL (https://…/telegram/webhook),
TELEGRAM_WEBHOOK_SECRET (16-256 characters of A-Za-z0-9_-; not needed with --delete),
TELEGRAM_API_ROOT (optional: a local Bot API server). Exit 0 done, 1 Telegram refused
or did not answer, 2 bad usage or settings.`,
  options: { delete: { type: 'boolean' } },
});

if (require.main === module)
  runCli(
    WEBHOOK_CLI,
    async ({ values }) => {
      process.stdout.write(`${await registerWebhook(process.env, values.delete === true)}\n`);
      return 0;
    },
    // Telegram's refusals (GrammyError, HttpError) are outside ones: their message, exit 1.
    { expected: [ConfigError], crash: { code: 1, stack: false } },
  );
