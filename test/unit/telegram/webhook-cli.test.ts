import { TelegramEmulator } from '../../../emulator/telegram/emulator';
import { registerWebhook } from '../../../tools/cli/telegram-webhook';
import { parseUpdate, secretMatches } from '../../../lib/telegram/webhook';

const token = `42:${'t'.repeat(30)}`;

describe('npm run telegram:webhook', () => {
  let emulator: TelegramEmulator;
  let root: string;
  beforeAll(async () => {
    emulator = new TelegramEmulator({ token });
    root = await emulator.listen();
  });
  afterAll(() => emulator.close());

  it('registers the webhook with its secret, and deletes it', async () => {
    const env = {
      TELEGRAM_BOT_TOKEN: token,
      TELEGRAM_API_ROOT: root,
      TELEGRAM_WEBHOOK_URL: 'https://api.example/telegram/webhook',
      TELEGRAM_WEBHOOK_SECRET: 's'.repeat(32),
    };
    expect(await registerWebhook(env)).toMatch(/webhook set/);
    expect(await (await fetch(`${root}/emulator/webhook`)).json()).toEqual({
      url: 'https://api.example/telegram/webhook',
      has_secret: true,
    });
    await registerWebhook(env, true);
    expect(await (await fetch(`${root}/emulator/webhook`)).json()).toEqual({ url: '', has_secret: false });
  });

  it('names what is missing and never prints the token', async () => {
    await expect(registerWebhook({ TELEGRAM_BOT_TOKEN: 'nope' })).rejects.toThrow(
      /TELEGRAM_BOT_TOKEN.*\n?.*TELEGRAM_WEBHOOK_URL|TELEGRAM_WEBHOOK_URL/s,
    );
    await expect(registerWebhook({ TELEGRAM_BOT_TOKEN: 'nope' })).rejects.not.toThrow(/nope/);
  });
});

describe('webhook edge', () => {
  it('compares the secret exactly', () => {
    expect(secretMatches('abc', 'abc')).toBe(true);
    for (const presented of [undefined, '', 'ab', 'abcd', 'ABC']) expect(secretMatches(presented, 'abc')).toBe(false);
    expect(secretMatches('', '')).toBe(false);
  });

  it('accepts Update kinds it does not handle and refuses malformed ones', () => {
    expect(parseUpdate({ update_id: 1, poll: {} })).toEqual({ update_id: 1, poll: {} });
    expect(() => parseUpdate({ update_id: 1.5 })).toThrow(/update_id/);
    expect(() => parseUpdate({ update_id: 1, callback_query: [] })).toThrow(/callback_query/);
  });
});
