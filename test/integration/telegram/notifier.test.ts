import net from 'node:net';
import { marshall } from '@aws-sdk/util-dynamodb';
import { randomUUID } from 'node:crypto';
import { TelegramEmulator } from '../../../emulator/telegram/emulator';
import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { GrammySender } from '../../../lib/telegram/api';
import { DynamoDeliveryStore } from '../../../lib/telegram/dynamodb-store';
import { DEFAULT_POLICY, DeliveryPolicy, NotifierDeps, notifyRecords } from '../../../lib/telegram/notifier';
import { Pacer } from '../../../lib/telegram/pacer';
import type { StreamRecord } from '../../../lib/telegram/model';
import { ClaimLostError } from '../../../lib/telegram/errors';
import { stackClients } from '../../support/stack';

/**
 * The notifier on DynamoDB Local (the stack's telegram table) against an
 * in-process Telegram emulator: exactly once across a crash between "sent"
 * and "recorded", bounded retries, the failure store.
 */
const aws = stackClients();
const table = process.env.TABLE_TELEGRAM!;
const token = `123456:${'x'.repeat(30)}`;
let emulator: TelegramEmulator;
let apiRoot: string;

beforeAll(async () => {
  emulator = new TelegramEmulator({ token, timeoutFaultMs: 1500, limits: null });
  apiRoot = await emulator.listen();
});
afterAll(async () => {
  await emulator.close();
  aws.dynamodb.destroy();
});

const CHAT = -5001;
const POLICY: DeliveryPolicy = { attempts: 4, boundMs: 8000, leaseMs: 1500, backoffMs: 50 };
/** Fast rates for the tests that are not about pacing (the emulator's are off for them). */
const FAST = { chatGapMs: 0, groupPerMinute: 100_000, botPerSecond: 1000, marginMs: 0 };

function deps(overrides: Partial<NotifierDeps> = {}): NotifierDeps {
  const store = new DynamoDeliveryStore({ documents: aws.documents, table });
  return {
    deliveries: store,
    moves: store,
    languages: { languages: async () => new Map() },
    locale: { timeZone: 'UTC' },
    pacer: new Pacer(FAST),
    sender: new GrammySender({ token, apiRoot, timeoutMs: 1000 }),
    chats: [CHAT],
    uiBase: 'http://ui.test',
    log: silentLogger,
    policy: POLICY,
    ...overrides,
  };
}

function failedRecord(id = newId(), name = 'Sintel'): StreamRecord {
  const image = (state: string) =>
    marshall({
      PK: `DL#${id}`,
      SK: 'META',
      entity: 'download',
      id,
      name,
      state,
      infohashes: [{ infohash: 'cd'.repeat(20), kind: 'v1' }],
    });
  return {
    eventID: randomUUID(),
    eventName: 'MODIFY',
    dynamodb: { SequenceNumber: String(Date.now()), NewImage: image('failed'), OldImage: image('downloading') },
  };
}

const sentAbout = (id: string) => emulator.messages.filter((m) => m.text.includes(id));

describe('exactly once', () => {
  it('sends a redelivered record once', async () => {
    const record = failedRecord();
    const id = record.dynamodb!.NewImage!.id.S!;
    expect((await notifyRecords(deps(), [record])).outcomes.sent).toBe(1);
    expect((await notifyRecords(deps(), [record, record])).outcomes.duplicate).toBe(2);
    expect(sentAbout(id)).toHaveLength(1);
  });

  it('does not send again when the sender crashed between the send and its record', async () => {
    const record = failedRecord();
    const id = record.dynamodb!.NewImage!.id.S!;
    const crash = async () => {
      throw new Error('injected crash after send');
    };
    expect((await notifyRecords(deps({ afterSend: crash }), [record])).outcomes.error).toBe(1);
    expect(sentAbout(id)).toHaveLength(1);
    // Redelivered while the dead sender's lease runs: someone holds it, nothing sent, and the record is
    // handed back (resumeFrom) to be looked at again once the lease is over.
    const held = await notifyRecords(deps(), [record]);
    expect(held.outcomes.deferred).toBe(1);
    expect(held.resumeFrom).toBe(record.dynamodb!.SequenceNumber);
    // Redelivered after the lease: the outcome is unknown, recorded as uncertain, still not resent.
    await new Promise((r) => setTimeout(r, POLICY.leaseMs + 200));
    expect((await notifyRecords(deps(), [record])).outcomes.failed).toBe(1);
    expect((await notifyRecords(deps(), [record])).outcomes.duplicate).toBe(1);
    expect(sentAbout(id)).toHaveLength(1);
    const failures = await deps().deliveries.listFailures(20);
    expect(failures.find((f) => f.download_id === id)?.reason).toMatch(/^uncertain: crashed while sending/);
  });

  it('resends after a crash while waiting to retry (nothing was in flight)', async () => {
    const record = failedRecord();
    const id = record.dynamodb!.NewImage!.id.S!;
    await fetch(`${apiRoot}/emulator/faults`, {
      method: 'PUT',
      body: JSON.stringify({ chat_id: CHAT, fault: '500', count: 1 }),
    });
    // The "crash": the sleep before the second attempt never returns.
    const stuck = notifyRecords(deps({ sleep: () => new Promise(() => undefined) }), [record]);
    await new Promise((r) => setTimeout(r, 300));
    expect(sentAbout(id)).toHaveLength(0);
    await new Promise((r) => setTimeout(r, POLICY.leaseMs + 300));
    expect((await notifyRecords(deps(), [record])).outcomes.sent).toBe(1);
    expect(sentAbout(id)).toHaveLength(1);
    void stuck;
  });
});

describe('bounded retries and the failure store', () => {
  afterEach(() => fetch(`${apiRoot}/emulator/faults`, { method: 'DELETE' }));

  it('a send whose answer is lost (a timeout after the request went out) is uncertain: never sent again', async () => {
    const record = failedRecord();
    const id = record.dynamodb!.NewImage!.id.S!;
    await fetch(`${apiRoot}/emulator/faults`, {
      method: 'PUT',
      body: JSON.stringify({ chat_id: CHAT, count: 1, fault: 'timeout' }),
    });
    expect((await notifyRecords(deps(), [record])).outcomes).toMatchObject({ failed: 1, sent: 0 });
    // The record again (the stream's retry, a restart that reads the stream from its start): nothing sent.
    expect((await notifyRecords(deps(), [record])).outcomes).toMatchObject({ duplicate: 1, sent: 0 });
    expect(sentAbout(id)).toHaveLength(0); // the emulator dropped it; Telegram may not have: unknown either way
    const failures = await deps().deliveries.listFailures(50);
    expect(failures.find((f) => f.download_id === id)?.reason).toMatch(/^uncertain: answer lost/);
  });

  it('a connection never made (Telegram unreachable) is retried, then sent', async () => {
    const record = failedRecord();
    const id = record.dynamodb!.NewImage!.id.S!;
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise((r) => closed.close(r));
    const unreachable = new GrammySender({ token, apiRoot: `http://127.0.0.1:${port}`, timeoutMs: 1000 });
    const real = new GrammySender({ token, apiRoot, timeoutMs: 1000 });
    let calls = 0;
    const sender = {
      sendMessage: (...a: Parameters<GrammySender['sendMessage']>) =>
        ++calls <= 2 ? unreachable.sendMessage(...a) : real.sendMessage(...a),
    };
    expect((await notifyRecords(deps({ sender }), [record])).outcomes).toMatchObject({ sent: 1, failed: 0 });
    expect(calls).toBe(3);
    expect(sentAbout(id)).toHaveLength(1);
  });

  it('retries 429 (after retry_after) and 5xx, then sends', async () => {
    const record = failedRecord();
    const id = record.dynamodb!.NewImage!.id.S!;
    for (const f of [{ fault: '429', retry_after: 1 }, { fault: '500' }]) {
      await fetch(`${apiRoot}/emulator/faults`, {
        method: 'PUT',
        body: JSON.stringify({ chat_id: CHAT, count: 1, ...f }),
      });
    }
    const began = Date.now();
    expect((await notifyRecords(deps(), [record])).outcomes.sent).toBe(1);
    expect(Date.now() - began).toBeGreaterThanOrEqual(1000);
    expect(sentAbout(id)).toHaveLength(1);
  });

  it('rides out 15 s of 500s with its default policy: sent once, nothing failed (the soak lost 2 to 19 s)', async () => {
    const record = failedRecord();
    const id = record.dynamodb!.NewImage!.id.S!;
    await fetch(`${apiRoot}/emulator/faults`, {
      method: 'PUT',
      body: JSON.stringify({ chat_id: CHAT, fault: '500', count: 100_000 }),
    });
    const outage = setTimeout(() => void fetch(`${apiRoot}/emulator/faults`, { method: 'DELETE' }), 15_000);
    try {
      const policy = { ...DEFAULT_POLICY, leaseMs: 1500 };
      const summary = await notifyRecords(deps({ policy }), [record]);
      expect(summary.outcomes).toMatchObject({ sent: 1, failed: 0, deferred: 0 });
    } finally {
      clearTimeout(outage);
      await fetch(`${apiRoot}/emulator/faults`, { method: 'DELETE' });
    }
    expect(sentAbout(id)).toHaveLength(1);
    expect((await notifyRecords(deps(), [record])).outcomes.duplicate).toBe(1);
  }, 60_000);

  it('hands an outage longer than its bound back to the stream, then sends once, without holding up another chat', async () => {
    const stuck = failedRecord();
    const later = failedRecord();
    await fetch(`${apiRoot}/emulator/faults`, {
      method: 'PUT',
      body: JSON.stringify({ chat_id: CHAT, fault: '500', count: 100_000 }),
    });
    // Two chats: the other chat's queue is not behind the failing one's.
    const other = -5002;
    const policy = { ...POLICY, boundMs: 1000 };
    const summary = await notifyRecords(deps({ chats: [CHAT, other], policy }), [stuck, later]);
    // The first record not delivered to every chat is the batch item failure: the stream resumes there.
    expect(summary.outcomes).toMatchObject({ deferred: 2, failed: 0, sent: 2 });
    expect(summary.resumeFrom).toBe(stuck.dynamodb!.SequenceNumber);
    for (const r of [stuck, later])
      expect(
        emulator.messages.filter((m) => m.chat_id === other && m.text.includes(r.dynamodb!.NewImage!.id.S!)),
      ).toHaveLength(1);
    const failures = await deps().deliveries.listFailures(50);
    expect(failures.some((f) => f.download_id === stuck.dynamodb!.NewImage!.id.S!)).toBe(false);
    // Telegram is back: the stream's retry of the batch sends each message once, and only to the chat that missed it.
    await fetch(`${apiRoot}/emulator/faults`, { method: 'DELETE' });
    const again = await notifyRecords(deps({ chats: [CHAT, other] }), [stuck, later]);
    expect(again.outcomes).toMatchObject({ sent: 2, duplicate: 2, deferred: 0 });
    for (const r of [stuck, later]) expect(sentAbout(r.dynamodb!.NewImage!.id.S!)).toHaveLength(2);
  });

  it('stores an unreadable record as a failure and goes on with the batch', async () => {
    const good = failedRecord();
    const bad: StreamRecord = { ...failedRecord(), eventID: 'bad id with spaces' };
    const summary = await notifyRecords(deps(), [bad, good]);
    expect(summary.outcomes).toMatchObject({ error: 1, sent: 1 });
    expect((await deps().deliveries.listFailures(5)).some((f) => f.kind === 'unreadable')).toBe(true);
  });

  it('refuses nothing for hostile names: escaped, sent, shown verbatim', async () => {
    const name = '<script>alert("x")</script> & <b>';
    const record = failedRecord(newId(), name);
    expect((await notifyRecords(deps(), [record])).outcomes.sent).toBe(1);
    expect(sentAbout(record.dynamodb!.NewImage!.id.S!)[0].text).toContain(name);
  });
});

describe("settling a dead sender's delivery", () => {
  // The takeover of a `sending` delivery whose lease ran out is one transaction conditioned on the
  // dead owner and its lease: under a race exactly one claimer settles it, the others see it
  // settled, nobody errors, and the failure store gets one entry.
  it('is settled once by racing claimers, and the dead owner can no longer fail it', async () => {
    const store = deps().deliveries;
    const downloadId = newId();
    const ref = { eventId: randomUUID(), chatId: CHAT, downloadId, kind: 'failed' as const };
    const t0 = Date.parse('2026-12-03T06:00:00Z');
    expect(await store.claim(ref, 'dead', t0, t0 + 1000)).toEqual({ claimed: true, attempts: 0 });
    await store.markSending(ref, 'dead', t0 + 1000);

    const later = t0 + 5000; // past the lease
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.claim(ref, `taker-${i}`, later, later + 1000)),
    );
    expect(results.filter((r) => !r.claimed && r.settledNow)).toHaveLength(1);
    for (const r of results) expect(r).toMatchObject({ claimed: false, status: 'uncertain' });

    // The late worker of the delivery taken over: none of its writes lands (at most once, one record).
    await expect(store.markFailed(ref, 'dead', 'woke up late')).rejects.toThrow(ClaimLostError);
    await expect(store.markRetrying(ref, 'dead', 1, 'timeout', later + 9000)).rejects.toThrow(ClaimLostError);
    await expect(store.markSending(ref, 'dead', later + 9000)).rejects.toThrow(ClaimLostError);
    await expect(store.markSent(ref, 'dead', 42)).rejects.toThrow(ClaimLostError);
    expect(await store.claim(ref, 'next', later + 60_000, later + 61_000)).toEqual({
      claimed: false,
      status: 'uncertain',
    });
    const failures = (await store.listFailures(100)).filter((f) => f.download_id === downloadId);
    expect(failures).toHaveLength(1);
    expect(failures[0].reason).toMatch(/^uncertain: crashed while sending/);
  });
});
