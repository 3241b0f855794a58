import { NOT_ALLOWED, REFUSAL } from '../../../lib/telegram/bot';
import type { Update } from 'grammy/types';
import { ALLOWED, CHAT, command, harness, ID, MEMBER, press } from './bot-harness';

/** A post in the configured chat as a channel: no person (`from`), the channel as its sender. */
function channelPost(text: string, kind: 'channel_post' | 'edited_channel_post' = 'channel_post'): Update {
  const { message, update_id } = command(text, ALLOWED) as Update & { message: Record<string, unknown> };
  const { from: _from, ...post } = message;
  const chat = { id: CHAT, type: 'channel', title: 'c' };
  return { update_id, [kind]: { ...post, chat, sender_chat: chat } } as unknown as Update;
}

/**
 * Telegram access is per chat for reading and per person for changing
 * (issue 41): any member of a configured group may refresh a card or /find,
 * only a configured person may Retry or Cancel, and a refused update writes
 * nothing, not even its "seen" record.
 */
describe('who may change a download from Telegram', () => {
  it.each([
    ['Retry', `v1:r:${ID}`],
    ['Cancel', `v1:c:${ID}`],
  ])('a group member not on the allow-list pressing %s: refused before any write', async (_name, data) => {
    const h = harness({ state: 'downloading' });
    await h.handle(press(data, MEMBER));
    expect(h.writes).toEqual([]);
    expect(h.calls).toEqual([
      { method: 'answerCallbackQuery', payload: expect.objectContaining({ text: NOT_ALLOWED }) },
    ]);
    expect(h.download!.state).toBe('downloading');
  });

  it('a stranger in a chat that is not served: refused, nothing written', async () => {
    const h = harness({ state: 'failed' });
    await h.handle(press(`v1:r:${ID}`, MEMBER, { chat: -42 }));
    await h.handle(command('/find clip', MEMBER, -42));
    expect(h.writes).toEqual([]);
    expect(h.calls.map((c) => c.payload.text)).toEqual([REFUSAL, REFUSAL]);
  });

  it('a group member may still refresh a card and use the reading commands', async () => {
    const h = harness({ state: 'failed' });
    await h.handle(press(`v1:o:${ID}`, MEMBER));
    expect(h.calls[0]).toEqual({
      method: 'answerCallbackQuery',
      payload: expect.objectContaining({ text: 'Refreshing…' }),
    });
    expect(h.writes.filter((w) => !w.startsWith('update:'))).toEqual([]);
  });

  it('the configured person may retry from the group', async () => {
    const h = harness({ state: 'failed' });
    await h.handle(press(`v1:r:${ID}`, ALLOWED));
    expect(h.writes).toEqual([expect.stringMatching(/^update:/), 'activate', 'torrent_add']);
    expect(h.download!.state).toBe('queued');
  });

  it('with no allow-list configured, nobody changes anything from Telegram', async () => {
    const h = harness({ state: 'failed' }, []);
    await h.handle(press(`v1:r:${ID}`, ALLOWED));
    expect(h.writes).toEqual([]);
    expect(h.calls[0].payload.text).toBe(NOT_ALLOWED);
  });

  it.each(['channel_post', 'edited_channel_post'] as const)(
    '%s: a command that writes (/lang ru in a configured channel) has no person to allow: refused, nothing written',
    async (kind) => {
      const h = harness();
      await h.handle(channelPost('/lang ru', kind));
      expect(h.writes).toEqual([]);
      expect(h.languages.size).toBe(0);
    },
  );

  it('a channel post that only reads (/help) is still answered', async () => {
    const h = harness();
    await h.handle(channelPost('/help'));
    expect(h.calls.map((c) => c.method)).toEqual(['sendMessage']);
    expect(h.writes.filter((w) => !w.startsWith('update:'))).toEqual([]);
  });
});
