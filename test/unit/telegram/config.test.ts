import { ConfigError } from '../../../lib/config';
import { loadTelegramConfig } from '../../../lib/telegram/config';

describe('loadTelegramConfig', () => {
  const base = { TABLE_TELEGRAM: 'svc-dev-telegram' };
  const token = `123:${'a'.repeat(30)}`;

  it('is off without a token', () => {
    expect(loadTelegramConfig(base)).toMatchObject({ enabled: false, chats: [], publicUiUrl: 'http://127.0.0.1:3000' });
  });

  it('reads chats, users and the UI base', () => {
    const cfg = loadTelegramConfig({
      ...base,
      TELEGRAM_BOT_TOKEN: token,
      TELEGRAM_WEBHOOK_SECRET: 's'.repeat(20),
      TELEGRAM_CHAT_IDS: '-1001, 42',
      TELEGRAM_ALLOWED_USER_IDS: '7',
      PUBLIC_UI_URL: 'https://ui.example',
    });
    expect(cfg).toMatchObject({ enabled: true, chats: [-1001, 42], users: [7], publicUiUrl: 'https://ui.example' });
  });

  it('loads without the webhook secret: the notifier and the console retry are given only the bot token', () => {
    const cfg = loadTelegramConfig({ ...base, TELEGRAM_BOT_TOKEN: token, TELEGRAM_CHAT_IDS: '-1001' });
    expect(cfg).toMatchObject({ enabled: true, token, webhookSecret: '' });
  });

  it('names every problem and never prints the token or the secret', () => {
    let err: unknown;
    try {
      loadTelegramConfig({
        ...base,
        TELEGRAM_BOT_TOKEN: 'bad-token-value',
        TELEGRAM_WEBHOOK_SECRET: 'short',
        TELEGRAM_CHAT_IDS: 'general',
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    for (const name of ['TELEGRAM_BOT_TOKEN', 'TELEGRAM_WEBHOOK_SECRET', 'TELEGRAM_CHAT_IDS'])
      expect(message).toContain(name);
    expect(message).not.toContain('bad-token-value');
    expect(message).not.toContain('short');
  });
});
