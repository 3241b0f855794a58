import { marshall } from '@aws-sdk/util-dynamodb';
import { randomUUID } from 'node:crypto';
import { TelegramEmulator } from '../../../emulator/telegram/emulator';
import { newId } from '../../../lib/ident';
import { formatBytes } from '../../../lib/i18n';
import { silentLogger } from '../../../lib/log';
import { GrammySender } from '../../../lib/telegram/api';
import { DynamoDeliveryStore } from '../../../lib/telegram/dynamodb-store';
import { DynamoStatusStore } from '../../../lib/telegram/dynamodb-status';
import { NotifierDeps, notifyRecords } from '../../../lib/telegram/notifier';
import { Pacer } from '../../../lib/telegram/pacer';
import type { StreamRecord } from '../../../lib/telegram/model';
import { stackClients } from '../../support/stack';

/**
 * The status message of a download (decision 456) on DynamoDB Local and the Telegram emulator: one message per
 * download and chat, edited in place as it moves, the same one after a restart (a new notifier, a new store
 * client, nothing in memory); a final message on completion; a new one when Telegram lost it.
 */
const aws = stackClients();
const table = process.env.TABLE_TELEGRAM!;
const token = `123456:${'s'.repeat(30)}`;
const GiB = 1024 ** 3;
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

const CHAT = -6001;
const FAST = { chatGapMs: 0, groupPerMinute: 100_000, botPerSecond: 1000, marginMs: 0 };

/** A notifier as a fresh container builds it: its own pacer, store clients and sender. */
function notifier(overrides: Partial<NotifierDeps> = {}): NotifierDeps {
  const store = new DynamoDeliveryStore({ documents: aws.documents, table });
  return {
    deliveries: store,
    moves: store,
    statuses: new DynamoStatusStore({ documents: aws.documents, table }),
    languages: { languages: async () => new Map() },
    locale: { timeZone: 'UTC' },
    pacer: new Pacer(FAST),
    sender: new GrammySender({ token, apiRoot, timeoutMs: 2000 }),
    chats: [CHAT],
    uiBase: 'http://ui.test',
    log: silentLogger,
    policy: { attempts: 3, boundMs: 4000, leaseMs: 1500, backoffMs: 50 },
    ...overrides,
  };
}

let seq = 1000;
function stream(id: string) {
  let old: Record<string, unknown> | undefined;
  return (fields: Record<string, unknown>, eventName = old ? 'MODIFY' : 'INSERT', sequence = ++seq): StreamRecord => {
    const next = {
      PK: `DL#${id}`,
      SK: 'META',
      entity: 'download',
      id,
      name: 'Sintel',
      state: 'queued',
      infohashes: [{ infohash: 'ef'.repeat(20), kind: 'v1' }],
      updated_at: new Date().toISOString(),
      ...(old ?? {}),
      ...fields,
    };
    const record: StreamRecord = {
      eventID: randomUUID(),
      eventName,
      dynamodb: {
        SequenceNumber: String(sequence),
        NewImage: marshall(next, { removeUndefinedValues: true }),
        ...(old ? { OldImage: marshall(old, { removeUndefinedValues: true }) } : {}),
      },
    };
    old = next;
    return record;
  };
}
const about = (id: string) => emulator.messages.filter((m) => m.chat_id === CHAT && m.text.includes(id));

it('one message per download, edited in place as it moves, the same one across a restart; a final message', async () => {
  const id = newId();
  const next = stream(id);
  expect((await notifyRecords(notifier(), [next({})])).outcomes.sent).toBe(1);
  const [status] = about(id);
  expect(status.text).toMatch(/^New download: Sintel/);

  const moving = next({
    state: 'downloading',
    progress: 0.5,
    size_bytes: 4 * GiB,
    downloaded_bytes: 2 * GiB,
    dl_speed: 1_572_864,
    eta_s: 1365,
    transfer_at: 'T1',
  });
  expect((await notifyRecords(notifier(), [moving])).statuses.edited).toBe(1);
  expect(about(id)).toHaveLength(1);
  expect(about(id)[0]).toMatchObject({ message_id: status.message_id, edits: 1 });
  expect(about(id)[0].text).toContain(`50% · ${formatBytes('en', 2 * GiB)} of ${formatBytes('en', 4 * GiB)}`);
  expect(about(id)[0].text).toContain('22\u00a0min 45\u00a0s left');
  expect(about(id)[0].text).toMatch(/^New download: Sintel/);

  // A restart: a new container knows nothing but the table, and edits the same message.
  const later = next({ progress: 0.8, downloaded_bytes: 3.2 * GiB, transfer_at: 'T2' });
  expect((await notifyRecords(notifier(), [later])).statuses.edited).toBe(1);
  expect(about(id)).toHaveLength(1);
  expect(about(id)[0]).toMatchObject({ message_id: status.message_id, edits: 2 });
  expect(about(id)[0].text).toContain('80%');

  // The stream hands an older change again: it never overwrites the newer one shown.
  expect((await notifyRecords(notifier(), [moving])).statuses.skipped).toBe(1);
  expect(about(id)[0]).toMatchObject({ edits: 2 });
  expect(about(id)[0].text).toContain('80%');

  // Completion: the status message shows it, and one final message says it.
  const done = next({ state: 'completed', progress: 1, dl_speed: 0, transfer_at: 'T3' });
  const summary = await notifyRecords(notifier(), [done]);
  expect(summary.statuses.edited).toBe(1);
  expect(summary.outcomes.sent).toBe(1);
  const all = about(id);
  expect(all.map((m) => m.text.split(':')[0])).toEqual(['New download', 'Completed']);
  expect(all[0].text).toContain('state: completed');
  expect(all[0].text).toContain('100%');
});

it('many changes in one batch: one edit, the last; the same text again is "not modified", not an error', async () => {
  const id = newId();
  const next = stream(id);
  await notifyRecords(notifier(), [next({})]);
  const batch = [0.1, 0.2, 0.3, 0.4].map((progress) => next({ state: 'downloading', progress }));
  const summary = await notifyRecords(notifier(), batch);
  expect(summary.statuses).toMatchObject({ edited: 1, skipped: 0, failed: 0 });
  expect(about(id)[0]).toMatchObject({ edits: 1 });
  expect(about(id)[0].text).toContain('40%');
  // A change that renders the same text (40.01% shows as 40%): Telegram answers "not modified", which is success.
  const again = await notifyRecords(notifier(), [next({ progress: 0.4001 })]);
  expect(again.statuses).toMatchObject({ unchanged: 1, failed: 0 });
  expect(about(id)[0]).toMatchObject({ edits: 1 });
});

it('a status message Telegram no longer has: a new one is sent, and the next change edits that one', async () => {
  const id = newId();
  const next = stream(id);
  await notifyRecords(notifier(), [next({})]);
  const [first] = about(id);
  emulator.messages.splice(emulator.messages.indexOf(first), 1); // a person deleted it
  expect((await notifyRecords(notifier(), [next({ state: 'downloading', progress: 0.3 })])).statuses.opened).toBe(1);
  const [second] = about(id);
  expect(second.message_id).not.toBe(first.message_id);
  expect(second.text).toMatch(/^New download: Sintel/);
  await notifyRecords(notifier(), [next({ progress: 0.6 })]);
  expect(about(id)).toHaveLength(1);
  expect(about(id)[0]).toMatchObject({ message_id: second.message_id, edits: 1 });
});

it('a download with no status message yet: opened once, even by two invocations at once; a finished one opens none', async () => {
  const id = newId();
  const next = stream(id);
  next({ state: 'downloading' }, 'MODIFY'); // the first image, as if older than the status messages
  const a = next({ progress: 0.1 });
  const b = next({ progress: 0.2 });
  const [one, two] = await Promise.all([notifyRecords(notifier(), [a]), notifyRecords(notifier(), [b])]);
  expect(one.statuses.opened + two.statuses.opened).toBe(1);
  expect(about(id)).toHaveLength(1);
  expect(about(id)[0].text).toMatch(/^Download: Sintel/);

  const other = newId();
  const ended = stream(other);
  ended({ state: 'downloading' }, 'MODIFY');
  const summary = await notifyRecords(notifier(), [ended({ state: 'failed' })]);
  expect(summary.statuses.skipped).toBe(1);
  expect(about(other).map((m) => m.text.split(':')[0])).toEqual(['Failed']);
});

it('a timeout warning: a message with Keep waiting and Cancel, and the status message offers them too', async () => {
  const id = newId();
  const next = stream(id);
  await notifyRecords(notifier(), [next({ state: 'downloading' })]);
  const summary = await notifyRecords(notifier(), [next({ warning: 'stalled', warned_at: new Date().toISOString() })]);
  expect(summary.outcomes.sent).toBe(1);
  const [status, warned] = about(id);
  expect(warned.text).toMatch(/^No progress: keep waiting\?/);
  const buttons = (m: typeof warned) => m.reply_markup!.inline_keyboard[0].map((b) => b.callback_data);
  expect(buttons(warned)).toEqual([`v1:k:${id}`, `v1:c:${id}`]);
  expect(buttons(status)).toEqual([`v1:k:${id}`, `v1:c:${id}`]);
  // The warning answered: the status message has its usual buttons again.
  await notifyRecords(notifier(), [next({ warning: undefined, warned_at: undefined })]);
  expect(buttons(about(id)[0])).toEqual([`v1:r:${id}`, `v1:c:${id}`, `v1:o:${id}`]);
});

it('within the pace: progress alone is skipped while the chat has no room; a move of state waits for its slot', async () => {
  const id = newId();
  const next = stream(id);
  await notifyRecords(notifier(), [next({ state: 'downloading' })]);
  const busy = notifier();
  busy.pacer.pause(CHAT, Date.now() + 60_000); // a group past its 20 a minute, or a 429's retry_after
  const progressed = await notifyRecords(busy, [next({ progress: 0.3 })], { deadline: Date.now() + 500 });
  expect(progressed.statuses.skipped).toBe(1);
  expect(progressed.resumeFrom).toBeUndefined();
  expect(about(id)[0].edits).toBe(0);
  const moved = next({ state: 'paused' });
  const waited = await notifyRecords(busy, [moved], { deadline: Date.now() + 500 });
  expect(waited.statuses.deferred).toBe(1);
  expect(waited.resumeFrom).toBe(moved.dynamodb!.SequenceNumber);
  // The stream hands it back to an invocation with room: shown, with the latest progress too.
  expect((await notifyRecords(notifier(), [moved])).statuses.edited).toBe(1);
  expect(about(id)[0].text).toContain('state: paused');
  expect(about(id)[0].text).toContain('30%');
});
