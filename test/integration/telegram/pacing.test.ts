import { marshall } from '@aws-sdk/util-dynamodb';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { TelegramEmulator } from '../../../emulator/telegram/emulator';
import { newId } from '../../../lib/ident';
import { Logger, silentLogger } from '../../../lib/log';
import { GrammySender } from '../../../lib/telegram/api';
import { DynamoDeliveryStore } from '../../../lib/telegram/dynamodb-store';
import { moveKey, updateKey } from '../../../lib/telegram/keys';
import type { StreamRecord } from '../../../lib/telegram/model';
import { DeliveryPolicy, NotifierDeps, notifyRecords } from '../../../lib/telegram/notifier';
import { Pacer, PaceRules } from '../../../lib/telegram/pacer';
import { stackClients } from '../../support/stack';

/**
 * The notifier's pace on DynamoDB Local against an in-process emulator that
 * enforces rates: a burst to one group arrives in full and in order, 429s are
 * honoured, what does not fit in one invocation is resumed by the next, and a
 * group that became a supergroup is followed.
 */
jest.setTimeout(120_000);
const aws = stackClients();
const table = process.env.TABLE_TELEGRAM!;
const token = `123456:${'p'.repeat(30)}`;
let emulator: TelegramEmulator;
let apiRoot: string;

beforeAll(async () => {
  emulator = new TelegramEmulator({ token, limits: null });
  apiRoot = await emulator.listen();
});
afterAll(async () => {
  await emulator.close();
  aws.dynamodb.destroy();
});

const POLICY: DeliveryPolicy = { attempts: 4, boundMs: 8000, leaseMs: 3000, backoffMs: 50 };
const store = new DynamoDeliveryStore({ documents: stackClients().documents, table });

function deps(rules: PaceRules, overrides: Partial<NotifierDeps> = {}): NotifierDeps {
  return {
    deliveries: store,
    moves: store,
    languages: { languages: async () => new Map() },
    locale: { timeZone: 'UTC' },
    pacer: new Pacer(rules),
    sender: new GrammySender({ token, apiRoot, timeoutMs: 3000 }),
    chats: [],
    uiBase: 'http://ui.test',
    log: silentLogger,
    policy: POLICY,
    ...overrides,
  };
}

let sequence = 1_000_000;
function createdRecord(name: string): StreamRecord {
  const id = newId();
  return {
    eventID: randomUUID(),
    eventName: 'INSERT',
    dynamodb: {
      SequenceNumber: String(sequence++),
      NewImage: marshall({ PK: `DL#${id}`, SK: 'META', entity: 'download', id, name, state: 'queued', infohashes: [] }),
    },
  };
}

const limits = (body: unknown) =>
  fetch(`${apiRoot}/emulator/limits`, { method: 'PUT', body: JSON.stringify(body) }).then((r) => r.json());

/** What the event source does with a partial batch answer: the rest again, from the reported record. */
async function asTheStreamWould(d: NotifierDeps, records: StreamRecord[], invocationMs: number) {
  let rest = records;
  let invocations = 0;
  for (;;) {
    invocations += 1;
    const summary = await notifyRecords(d, rest, { deadline: Date.now() + invocationMs });
    if (!summary.resumeFrom) return invocations;
    const from = rest.findIndex((r) => r.dynamodb?.SequenceNumber === summary.resumeFrom);
    expect(from).toBeGreaterThanOrEqual(0);
    rest = rest.slice(from);
    if (invocations > 200) throw new Error('no progress');
  }
}

describe('a burst of 200 notifications to one group', () => {
  afterAll(() => limits({ off: true }));

  it('is delivered in full, in order, with every 429 honoured, across invocations', async () => {
    const group = -7001;
    // The emulator allows 5 a second, the notifier assumes 60: 429s must come, and be honoured.
    await limits({ chat_per_s: 5, group_per_min: 100_000, bot_per_s: 100 });
    const rules: PaceRules = { chatGapMs: 10, groupPerMinute: 4800, botPerSecond: 100, marginMs: 5 };
    const tag = randomUUID().slice(0, 8);
    const records = Array.from({ length: 200 }, (_, i) => createdRecord(`${tag}-${String(i).padStart(3, '0')}`));
    const began = Date.now();
    // Invocations of 3 s: the burst (at least 40 s at 5/s) cannot fit in one.
    const invocations = await asTheStreamWould(deps(rules, { chats: [group] }), records, 3000);
    const tookMs = Date.now() - began;

    const got = emulator.messages.filter((m) => m.chat_id === group && m.text.includes(tag));
    expect(got.map((m) => /-(\d{3})/.exec(m.text)![1])).toEqual(records.map((_, i) => String(i).padStart(3, '0')));
    const stats = emulator.stats.get(group)!;
    expect(stats.limited).toBeGreaterThan(0);
    expect(stats.unhonoured).toBe(0);
    expect(invocations).toBeGreaterThan(1);
    // The allowed rate, not faster: 200 at 5/s is at least ~39 s (the first ones go at once).
    expect(tookMs).toBeGreaterThan(35_000);
    console.log(
      `burst: 200 messages in ${tookMs} ms over ${invocations} invocations; 429s ${stats.limited}, unhonoured ${stats.unhonoured}`,
    );
  });

  it('paces a group the emulator limits exactly as the notifier does with no 429 at all', async () => {
    const group = -7002;
    await limits({ chat_per_s: 20, group_per_min: 600, bot_per_s: 60 });
    const rules: PaceRules = { chatGapMs: 50, groupPerMinute: 600, botPerSecond: 60, marginMs: 50 };
    const records = Array.from({ length: 30 }, (_, i) => createdRecord(`exact-${i}`));
    const summary = await notifyRecords(deps(rules, { chats: [group] }), records);
    expect(summary.outcomes.sent).toBe(30);
    expect(emulator.stats.get(group)).toMatchObject({ sent: 30, limited: 0, unhonoured: 0 });
  });
});

describe('a 429 pauses that chat only', () => {
  it('holds the paused chat for retry_after while the other chat goes on', async () => {
    const [slow, fast] = [-7101, -7102];
    await fetch(`${apiRoot}/emulator/faults`, {
      method: 'PUT',
      body: JSON.stringify({ chat_id: slow, fault: '429', count: 1, retry_after: 2 }),
    });
    const rules: PaceRules = { chatGapMs: 0, groupPerMinute: 100_000, botPerSecond: 1000, marginMs: 0 };
    const records = Array.from({ length: 5 }, (_, i) => createdRecord(`pause-${i}`));
    const arrived = new Map<number, number>();
    const began = Date.now();
    const summary = await notifyRecords(deps(rules, { chats: [slow, fast] }), records);
    for (const m of emulator.messages) if (m.text.includes('pause-4')) arrived.set(m.chat_id, Date.now() - began);
    expect(summary.outcomes.sent).toBe(10);
    expect(emulator.stats.get(slow)).toMatchObject({ limited: 1, unhonoured: 0 });
    const fastTimes = emulator.messages.filter((m) => m.chat_id === fast && m.text.includes('pause-'));
    expect(fastTimes).toHaveLength(5);
    // The fast chat's five were all out before the slow chat's first (it waited 2 s).
    const order = emulator.messages.filter((m) => m.text.includes('pause-')).map((m) => m.chat_id);
    expect(order.slice(0, 5)).toEqual([fast, fast, fast, fast, fast]);
    await fetch(`${apiRoot}/emulator/faults`, { method: 'DELETE' });
  });
});

describe('a group that became a supergroup', () => {
  const old = -7201;
  afterAll(() => aws.documents.send(new DeleteCommand({ TableName: table, Key: moveKey(old) })));

  it('is followed: the move recorded through the store and logged, the message re-sent there, later ones sent there', async () => {
    const moved = await fetch(`${apiRoot}/emulator/migrate`, {
      method: 'POST',
      body: JSON.stringify({ chat_id: old, announce: false }),
    }).then((r) => r.json() as Promise<{ to: number }>);
    const logged: Array<{ event: string; fields: unknown }> = [];
    const log: Logger = {
      ...silentLogger,
      warn: (event: string, fields?: unknown) => void logged.push({ event, fields }),
      child: () => log,
    } as Logger;
    const rules: PaceRules = { chatGapMs: 0, groupPerMinute: 100_000, botPerSecond: 1000, marginMs: 0 };
    const first = createdRecord('moved-1');
    expect((await notifyRecords(deps(rules, { chats: [old], log }), [first])).outcomes.sent).toBe(1);
    expect(emulator.messages.filter((m) => m.text.includes('moved-1')).map((m) => m.chat_id)).toEqual([moved.to]);
    expect((await store.moves()).get(old)).toBe(moved.to);
    expect(logged).toContainEqual({
      event: 'telegram_chat_migrated',
      fields: expect.objectContaining({ from_chat_id: old, to_chat_id: moved.to }),
    });

    // The next batch goes to the new chat at once: no 400 first.
    logged.length = 0;
    expect((await notifyRecords(deps(rules, { chats: [old], log }), [createdRecord('moved-2')])).outcomes.sent).toBe(1);
    expect(emulator.messages.filter((m) => m.text.includes('moved-2')).map((m) => m.chat_id)).toEqual([moved.to]);
    expect(logged.filter((l) => l.event === 'telegram_chat_migrated')).toHaveLength(0);
    // The delivery is still keyed by the configured chat: a redelivered record is not sent again.
    expect((await notifyRecords(deps(rules, { chats: [old] }), [first])).outcomes.duplicate).toBe(1);
  });
});

describe('the webhook ledger of update_id', () => {
  const LEASE = 10_000;

  it('lets exactly one of racing deliveries of one Update through; the others find it busy', async () => {
    const updateId = Math.floor(Math.random() * 1e9);
    const t = Date.now();
    const results = await Promise.all(Array.from({ length: 10 }, () => store.begin(updateId, t, t + LEASE)));
    expect(results.filter((r) => r === 'first')).toHaveLength(1);
    expect(results.filter((r) => r === 'busy')).toHaveLength(9);
    await store.finish(updateId, t + 100);
    expect(await store.begin(updateId, t + 200, t + 200 + LEASE)).toBe('done');
    // Past its TTL (Telegram gave up on it long ago) the record no longer counts.
    const later = t + 3 * 24 * 3600 * 1000;
    expect(await store.begin(updateId, later, later + LEASE)).toBe('first');
  });

  it('hands a handling that never finished to the delivery after its lease (the soak lost a press to a pause)', async () => {
    const updateId = Math.floor(Math.random() * 1e9);
    const t = Date.now();
    expect(await store.begin(updateId, t, t + LEASE)).toBe('first');
    expect(await store.begin(updateId, t + LEASE - 1, t + 2 * LEASE)).toBe('busy');
    expect(await store.begin(updateId, t + LEASE + 1, t + 2 * LEASE + 1)).toBe('first');
    // Its lease is the new one: a third delivery meanwhile is busy.
    expect(await store.begin(updateId, t + LEASE + 2, t + 2 * LEASE + 2)).toBe('busy');
  });

  it('hands an abandoned handling (it threw) to the next delivery at once; a finished one is never abandoned', async () => {
    const updateId = Math.floor(Math.random() * 1e9);
    const t = Date.now();
    expect(await store.begin(updateId, t, t + LEASE)).toBe('first');
    await store.abandon(updateId);
    expect(await store.begin(updateId, t + 1, t + 1 + LEASE)).toBe('first');
    await store.finish(updateId, t + 2);
    await store.abandon(updateId);
    expect(await store.begin(updateId, t + LEASE * 5, t + LEASE * 6)).toBe('done');
  });

  it('takes a seen-record written before leases (no status) as handled', async () => {
    const updateId = Math.floor(Math.random() * 1e9);
    const t = Date.now();
    await aws.documents.send(
      new PutCommand({
        TableName: table,
        Item: {
          entity: 'update',
          seen_at: new Date(t).toISOString(),
          expires_at: Math.floor(t / 1000) + 3600,
          ...updateKey(updateId),
        },
      }),
    );
    expect(await store.begin(updateId, t, t + LEASE)).toBe('done');
  });
});
