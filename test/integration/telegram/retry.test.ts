import { TelegramEmulator } from '../../../emulator/telegram/emulator';
import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import type { Download } from '../../../lib/downloads/model';
import { GrammySender } from '../../../lib/telegram/api';
import { DynamoDeliveryStore } from '../../../lib/telegram/dynamodb-store';
import { retryFailure, RetryDeps } from '../../../lib/telegram/retry';
import { stackClients } from '../../support/stack';
import { v1 } from '../../support/downloads';

/**
 * The console's retry of a failed delivery on DynamoDB Local (the stack's
 * telegram table) against an in-process Telegram emulator: at most once under
 * racing operators, a definite refusal gives the claim back, no answer keeps it.
 */
const aws = stackClients();
const table = process.env.TABLE_TELEGRAM!;
const token = `123456:${'y'.repeat(30)}`;
let emulator: TelegramEmulator;
let apiRoot: string;

beforeAll(async () => {
  emulator = new TelegramEmulator({ token, timeoutFaultMs: 1500 });
  apiRoot = await emulator.listen();
});
afterAll(async () => {
  await emulator.close();
  aws.dynamodb.destroy();
});

const store = () => new DynamoDeliveryStore({ documents: aws.documents, table });
const download = (): Download =>
  ({
    id: newId(),
    name: 'Sintel <1080p>',
    state: 'stuck',
    infohashes: [v1()],
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
    revision: 1,
  }) as unknown as Download;

async function failed(chat: number, d: Download, kind = 'stuck') {
  await store().recordFailure({ event_id: `ev-${newId()}`, chat_id: chat, download_id: d.id, kind, reason: 'gave up' });
  return (await store().listFailures(100)).find((f) => f.download_id === d.id)!;
}

const deps = (d: Download | undefined, timeoutMs = 1000): RetryDeps => ({
  deliveries: store(),
  downloads: { get: async (id) => (d && id === d.id ? d : undefined) },
  sender: new GrammySender({ token, apiRoot, timeoutMs }),
  languages: { languageOf: async () => undefined },
  locale: { timeZone: 'UTC' },
  uiBase: 'https://ui.example',
  now: Date.now,
  log: silentLogger,
});
const sentTo = (chat: number) => emulator.messages.filter((m) => m.chat_id === chat);

it('twelve operators retrying at once send ONE message; the rest are told it was taken', async () => {
  const chat = -7001;
  const d = download();
  const f = await failed(chat, d);
  const outcomes = await Promise.all(Array.from({ length: 12 }, () => retryFailure(deps(d), f.id)));
  expect(outcomes.filter((o) => o.outcome === 'sent')).toHaveLength(1);
  expect(outcomes.filter((o) => o.outcome === 'taken')).toHaveLength(11);
  expect(sentTo(chat)).toHaveLength(1);
  expect(sentTo(chat)[0].text).toContain('Sintel <1080p>');
  const after = (await store().listFailures(100)).find((x) => x.id === f.id)!;
  expect(after).toMatchObject({ retried_at: expect.any(String), retry_message_id: sentTo(chat)[0].message_id });
});

it('a refusal (Telegram answered 500) gives the claim back: the next retry sends', async () => {
  const chat = -7002;
  const d = download();
  const f = await failed(chat, d);
  await fetch(`${apiRoot}/emulator/faults`, { method: 'PUT', body: JSON.stringify({ chat_id: chat, fault: '500' }) });
  expect(await retryFailure(deps(d), f.id)).toMatchObject({ outcome: 'refused' });
  expect((await store().listFailures(100)).find((x) => x.id === f.id)!.retried_at).toBeUndefined();
  expect(await retryFailure(deps(d), f.id)).toMatchObject({ outcome: 'sent' });
  expect(sentTo(chat)).toHaveLength(1);
});

it('no answer (the request may have been delivered) keeps the claim: never sent twice', async () => {
  const chat = -7003;
  const d = download();
  const f = await failed(chat, d);
  await fetch(`${apiRoot}/emulator/faults`, {
    method: 'PUT',
    body: JSON.stringify({ chat_id: chat, fault: 'timeout' }),
  });
  expect(await retryFailure(deps(d, 500), f.id)).toMatchObject({ outcome: 'unknown' });
  expect(await retryFailure(deps(d), f.id)).toEqual({ outcome: 'taken' });
  expect(sentTo(chat)).toHaveLength(0);
});

it('an unknown failure id, a download that is gone, and an unknown kind send nothing', async () => {
  expect(await retryFailure(deps(undefined), newId())).toEqual({ outcome: 'missing' });
  const chat = -7004;
  const gone = await failed(chat, download());
  expect(await retryFailure(deps(undefined), gone.id)).toEqual({ outcome: 'no-download' });
  // Nothing went out: the claim is given back (the next try says the same, it never sends).
  expect((await store().listFailures(100)).find((x) => x.id === gone.id)!.retried_at).toBeUndefined();
  const d = download();
  const odd = await failed(chat, d, '__proto__');
  expect(await retryFailure(deps(d), odd.id)).toEqual({ outcome: 'no-download' });
  expect(sentTo(chat)).toHaveLength(0);
});
