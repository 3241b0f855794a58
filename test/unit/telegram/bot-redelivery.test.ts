import { BotError } from 'grammy';
import { UPDATE_LEASE_MS } from '../../../lib/telegram/bot';
import { UpdateInProgressError, UpdateNotClaimedError } from '../../../lib/telegram/errors';
import { ALLOWED, command, harness, ID, press } from './bot-harness';

/**
 * Telegram's re-delivery of an Update whose handling never finished (the soak lost a press this way: the
 * update was recorded as seen, DynamoDB Local paused, the invocation timed out before the answer and the
 * action, and the re-delivery was skipped as seen). Decision 356.
 */
const changes = (h: ReturnType<typeof harness>) => h.writes.filter((w) => !w.startsWith('update:'));
const answers = (h: ReturnType<typeof harness>) => h.calls.filter((c) => c.method === 'answerCallbackQuery');

describe('a re-delivered Update', () => {
  it('whose first handling died after the ledger write is handled again, and acted on once', async () => {
    const h = harness({ state: 'failed' });
    const update = press(`v1:r:${ID}`, ALLOWED);
    h.readStalls = true;
    void h.handle(update); // the invocation stalls in the read and dies there (never settles)
    await new Promise((r) => setImmediate(r));
    expect(h.writes).toEqual([`update:${update.update_id}`]);
    expect(answers(h)).toEqual([]);

    // Telegram waited for the answer, then delivers it again: the dead handling's lease is over.
    h.readStalls = false;
    h.clock += UPDATE_LEASE_MS + 1;
    await h.handle(update);
    expect(answers(h).map((c) => c.payload.text)).toEqual(['Retrying…']);
    expect(changes(h)).toEqual(['activate', 'torrent_add']);

    // A later delivery of the handled Update does nothing at all.
    h.clock += UPDATE_LEASE_MS + 1;
    const before = h.calls.length;
    await h.handle(update);
    expect(h.calls.length).toBe(before);
    expect(changes(h)).toEqual(['activate', 'torrent_add']);
  });

  it('while its first handling still holds the lease is refused with UpdateInProgressError (the webhook answers 503)', async () => {
    const h = harness({ state: 'failed' });
    const update = press(`v1:r:${ID}`, ALLOWED);
    h.readStalls = true;
    void h.handle(update);
    await new Promise((r) => setImmediate(r));
    h.readStalls = false;
    h.clock += UPDATE_LEASE_MS - 1;
    const err = await h.handle(update).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BotError);
    expect((err as BotError).error).toBeInstanceOf(UpdateInProgressError);
    expect(h.calls).toEqual([]);
    expect(changes(h)).toEqual([]);
  });

  it('whose claim was written but its answer lost: Telegram is asked to deliver again, and the press is acted on once', async () => {
    // The soak's case: DynamoDB Local paused, the claim timed out on the client side and landed on resume.
    const h = harness({ state: 'failed' });
    const update = press(`v1:r:${ID}`, ALLOWED);
    h.claimAnswerLost = true;
    const err = await h.handle(update).catch((e: unknown) => e);
    expect((err as BotError).error).toBeInstanceOf(UpdateNotClaimedError);
    expect(err).toBeInstanceOf(BotError);
    expect(answers(h)).toEqual([]);
    expect(changes(h)).toEqual([]);

    // Delivered again within the lease the claim holds: still refused for now; after it, handled.
    h.claimAnswerLost = false;
    h.clock += UPDATE_LEASE_MS - 1;
    expect(((await h.handle(update).catch((e: unknown) => e)) as BotError).error).toBeInstanceOf(UpdateInProgressError);
    h.clock += 2;
    await h.handle(update);
    expect(answers(h).map((c) => c.payload.text)).toEqual(['Retrying…']);
    expect(changes(h)).toEqual(['activate', 'torrent_add']);
    expect(h.ledger.get(update.update_id)?.status).toBe('done');
  });

  it('whose handling threw is given back: the next delivery handles it', async () => {
    const h = harness();
    const update = command('/lang xx', ALLOWED);
    h.refused.sendMessage = 'Bad Request: chat not found';
    await expect(h.handle(update)).rejects.toBeInstanceOf(BotError);
    expect(h.ledger.get(update.update_id)?.leaseUntil).toBe(0);
    delete h.refused.sendMessage;
    await h.handle(update);
    expect(h.calls.filter((c) => c.method === 'sendMessage')).toHaveLength(2);
    expect(h.ledger.get(update.update_id)?.status).toBe('done');
  });
});
