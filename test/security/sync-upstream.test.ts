import type { ConnectionService } from '../../lib/sync/connections';
import type { HourlyService } from '../../lib/sync/service';
import { syncServices } from '../support/sync';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { BrokerageEmulator } from '../../emulator/brokerage/emulator';
import { newId } from '../../lib/ident';
import { silentLogger } from '../../lib/log';
import { DynamoSyncDataStore } from '../../lib/sync/dynamodb-data-store';
import { MANDATORY_SECTIONS, Section } from '../../lib/sync/model';
import { DEFAULT_SECTION_SETTINGS, SECTION_RUNNERS } from '../../lib/sync/sections';
import { runStep } from '../../lib/sync/step';
import { isolatedTable, stackClients, stackSealer } from '../support/stack';

/**
 * Hostile upstream answers (issue 11.4): items carrying PK, SK, entity,
 * user_id, __proto__, or ids that try to reach another key, go through every
 * section. No row outside the user's own data may change, and nothing is
 * polluted: items are built from named fields, keys written last.
 */
const aws = stackClients();
let table: { name: string; drop: () => Promise<void> };
let hourly: HourlyService;
let connections: ConnectionService;
let data: DynamoSyncDataStore;
let emulator: BrokerageEmulator;
let url: string;
let victim: string;

beforeAll(async () => {
  table = await isolatedTable(aws, 'SyncTable');
  ({ hourly, connections } = syncServices({
    documents: aws.documents,
    table: table.name,
    waitBoundMs: 60_000,
    sealer: stackSealer(),
  }));
  data = new DynamoSyncDataStore({ documents: aws.documents, table: table.name });
  emulator = new BrokerageEmulator();
  url = await emulator.listen();
  // The victim: another user with a connection, a settled hourly head and synced data.
  victim = newId();
  await connections.putConnection(victim, `t.${victim}`, Date.now());
  await syncAll(victim, {});
});
afterAll(async () => {
  await emulator.close();
  await table.drop();
  aws.dynamodb.destroy();
});

async function syncAll(user: string, inject: Record<string, unknown>): Promise<Record<Section, string>> {
  const r = await hourly.reserveHourly(user, Date.now(), { run_id: newId(), run_deadline: Date.now() + 55_000 });
  if (!('head' in r) || !r.head) throw new Error('no reservation');
  emulator.reset();
  if (Object.keys(inject).length) emulator.faults['*'] = { inject };
  const out = {} as Record<Section, string>;
  // One after the other: catalog.enrichment then sees what the others stored.
  for (const section of ['portfolio', 'operations', 'events.refresh', 'catalog.enrichment'] as const) {
    const step = { user_id: user, attempt_id: r.head.attempt_id, step_id: newId(), section };
    await hourly.recordDispatch(user, r.head.attempt_id, section, step.step_id);
    await runStep(
      {
        hourly,
        dispatch: async () => {}, // the sections run in order here
        connections,
        data,
        tbank: { baseUrl: url, appName: 'security-test', rateWindowMs: 60_000, backoffMs: 5 },
        settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: 30 },
        timeoutMs: 30_000,
        now: () => Date.UTC(2026, 11, 2, 10),
        log: silentLogger,
        runners: SECTION_RUNNERS,
      },
      step,
    );
    out[section] =
      (await hourly.stepRows(r.head.attempt_id)).find((row) => row.section === section)!.error_code ?? 'ok';
  }
  return out;
}

async function rows(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await aws.documents.send(
      new ScanCommand({ TableName: table.name, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    for (const item of page.Items ?? [])
      out.set(
        `${item.PK}|${item.SK}`,
        JSON.stringify(item, (_k, v) => (v instanceof Set ? [...v].sort() : v)),
      );
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

const ownedBy = (user: string, key: string, attempt?: string) =>
  key.startsWith(`USER#${user}|`) ||
  key.startsWith(`OPGEN#${user}#`) ||
  key.startsWith(`RATE#${user}|`) ||
  // Its own token's pacing schedules (lib/sync/pacer.ts), one per T-Bank service.
  key.startsWith(`PACE#TOKEN#${user}#`) ||
  // Its own connection: the first reservation moves the user's due entry from it to the head.
  key === `CONN|USER#${user}` ||
  (attempt !== undefined && key.startsWith(`ATTEMPT#${attempt}|`));

const hostileFields = {
  PK: `USER#VICTIM`,
  SK: 'HOURLY',
  entity: 'hourly',
  user_id: 'VICTIM',
  ['__proto__']: { polluted: 'yes' },
  constructor: { prototype: { polluted: 'yes' } },
};

it.each([
  ['extra key fields in every item', (v: string) => ({ ...hostileFields, PK: `USER#${v}`, user_id: v }), 'ok'],
  [
    'ids that try to reach the victim’s keys',
    (v: string) => ({ id: `x#USER#${v}`, instrumentUid: `u#${v}`, uid: `INSTR#x`, accountId: `#${v}` }),
    'BAD_UPSTREAM_ANSWER',
  ],
])(
  '%s: no row outside the user’s own data changes, nothing is polluted',
  async (_name, inject, expected) => {
    const attacker = newId();
    await connections.putConnection(attacker, `t.${attacker}`, Date.now());
    const before = await rows();
    const codes = await syncAll(attacker, inject(victim));
    const after = await rows();
    const attempt = (await hourly.head(attacker))!.attempt_id;

    // The sections ended as expected: clean (fields ignored) or a clear error (unsafe ids).
    if (expected === 'ok')
      expect(codes).toEqual({ portfolio: 'ok', operations: 'ok', 'events.refresh': 'ok', 'catalog.enrichment': 'ok' });
    else
      expect(
        Object.values(codes)
          .filter((c) => c !== 'ok')
          .every((c) => c === expected),
      ).toBe(true);
    if (expected !== 'ok') expect(Object.values(codes)).toContain(expected);

    for (const [key, value] of before) {
      if (ownedBy(attacker, key, attempt)) continue;
      if (key.startsWith('INSTR#') && expected === 'ok') continue; // the shared catalog, refreshed from named fields (checked below)
      if (key === 'PACE#EGRESS|PACE') continue; // the addresses' shared schedule: every call moves it, from no field of an answer
      expect([key, after.get(key)]).toEqual([key, value]);
    }
    for (const key of after.keys()) {
      if (before.has(key) || ownedBy(attacker, key, attempt)) continue;
      expect(key).toMatch(/^(INSTR#[0-9a-f-]+\|META|PACE#EGRESS\|PACE)$/);
    }
    for (const [key, value] of after) {
      if (!ownedBy(attacker, key) && !key.startsWith('INSTR#')) continue;
      const item = JSON.parse(value);
      expect(item.polluted).toBeUndefined();
      expect(value).not.toContain('VICTIM');
      expect(value).not.toContain('"polluted"');
      if (item.user_id !== undefined) expect(item.user_id).toBe(attacker);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The victim's own view is untouched.
    expect(await hourly.head(victim)).toMatchObject({ user_id: victim });
    expect(MANDATORY_SECTIONS).toHaveLength(4);
  },
  60_000,
);
