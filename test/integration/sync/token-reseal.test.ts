import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { handler, MARGIN_MS, reseal } from '../../../functions/sync/reseal';
import { createKmsClient } from '../../../lib/aws/kms';
import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { newKeyringEntry } from '../../../lib/secrets/sealer';
import type { TokenSealer } from '../../../lib/secrets/token-sealer';
import { ConnectionService } from '../../../lib/sync/connections';
import { DynamoSyncStore } from '../../../lib/sync/dynamodb-store';
import { connectionKey } from '../../../lib/sync/keys';
import { resealTokens, type ResealResult } from '../../../lib/sync/reseal';
import { tokenSealer } from '../../../lib/sync/wiring';
import { startMoto, type Moto } from '../../support/moto';
import { isolatedTable, stackClients } from '../../support/stack';

/**
 * The migration of stored tokens from the keyring ("v1.") to KMS ("k1."), on
 * DynamoDB Local and moto's KMS: resumable, idempotent, never overwriting a
 * token replaced meanwhile; through the service, the handler and the CLI.
 */
const aws = stackClients();
const keyring = newKeyringEntry('legacy');
const tables: Array<{ name: string; drop: () => Promise<void> }> = [];
let moto: Moto;
let kms: KMSClient;
let key: string;
let handlerTable: string;

beforeAll(async () => {
  // Before anything loads lib/config (the wiring does, once per module registry): the handler's table.
  const table = await isolatedTable(aws, 'SyncTable');
  tables.push(table);
  handlerTable = table.name;
  process.env.TABLE_SYNC = handlerTable;
  moto = await startMoto();
  process.env.AWS_ENDPOINT_URL_KMS = moto.endpoint;
  kms = createKmsClient('us-east-1');
  key = (await kms.send(new CreateKeyCommand({}))).KeyMetadata!.Arn!;
}, 60_000);
afterAll(async () => {
  for (const t of tables) await t.drop();
  kms?.destroy();
  await moto?.stop();
  aws.dynamodb.destroy();
});

const sealers = {
  legacy: () => tokenSealer({ SYNC_TOKEN_KEYS: keyring }),
  migrating: () => tokenSealer({ SYNC_TOKEN_KMS_KEY: key, SYNC_TOKEN_KEYS: keyring }),
  kmsOnly: () => tokenSealer({ SYNC_TOKEN_KMS_KEY: key }),
};

/** A private sync table (or `name`) with `n` connections sealed under the legacy keyring, users in id order. */
async function legacyTable(n: number, name?: string) {
  const table = name ? { name } : await isolatedTable(aws, 'SyncTable');
  if ('drop' in table) tables.push(table);
  const store = new DynamoSyncStore({ documents: aws.documents, table: table.name });
  const users = Array.from({ length: n }, () => newId()).sort();
  const before = new ConnectionService({ store, sealer: sealers.legacy });
  for (const u of users) await before.putConnection(u, `t.${u}`, Date.now());
  const sealed = async (u: string) =>
    (await aws.documents.send(new GetCommand({ TableName: table.name, Key: connectionKey(u), ConsistentRead: true })))
      .Item!.token_sealed as string;
  const connections = (sealer: () => Promise<TokenSealer>) => new ConnectionService({ store, sealer });
  return { table: table.name, store, users, sealed, connections };
}

it('migrates: legacy values open meanwhile, the reseal stops at its limit and resumes, then the keyring can go', async () => {
  const t = await legacyTable(10);
  const migrating = t.connections(sealers.migrating);
  expect(await migrating.connectionToken(t.users[0])).toBe(`t.${t.users[0]}`);
  expect(await t.sealed(t.users[0])).toMatch(/^v1\.legacy\./); // reading writes nothing

  const deps = { store: t.store, sealer: await sealers.migrating(), log: silentLogger };
  const first = await resealTokens(deps, { limit: 4, pageSize: 3 });
  expect(first).toMatchObject({ done: false, cursor: t.users[3], counts: { scanned: 4, resealed: 4 } });
  const forms = await Promise.all(t.users.map(async (u) => (await t.sealed(u)).slice(0, 3)));
  expect(forms).toEqual([...Array(4).fill('k1.'), ...Array(6).fill('v1.')]);

  const rest = await resealTokens(deps, { cursor: first.cursor });
  expect(rest).toEqual({ done: true, counts: { scanned: 6, resealed: 6, current: 0, changed: 0, unreadable: 0 } });
  const again = await resealTokens(deps);
  expect(again.counts).toEqual({ scanned: 10, resealed: 0, current: 10, changed: 0, unreadable: 0 });

  const kmsOnly = t.connections(sealers.kmsOnly);
  for (const u of t.users) expect(await kmsOnly.connectionToken(u)).toBe(`t.${u}`);
});

it('a token replaced while the reseal runs is kept: counted as changed, never overwritten', async () => {
  const t = await legacyTable(3);
  const target = t.users[1];
  const documents = Object.create(aws.documents) as typeof aws.documents;
  let raced = false;
  documents.send = (async (command: unknown) => {
    // The user posts a new token between the reseal's read of the page and its conditional write.
    if (command instanceof UpdateCommand && command.input.Key?.SK === connectionKey(target).SK && !raced) {
      raced = true;
      await t.connections(sealers.migrating).putConnection(target, 't.replaced', Date.now());
    }
    return aws.documents.send(command as GetCommand);
  }) as typeof documents.send;
  const store = new DynamoSyncStore({ documents, table: t.table });
  const result = await resealTokens({ store, sealer: await sealers.migrating(), log: silentLogger });
  expect(raced).toBe(true);
  expect(result.counts).toEqual({ scanned: 3, resealed: 2, current: 0, changed: 1, unreadable: 0 });
  expect(await t.connections(sealers.kmsOnly).connectionToken(target)).toBe('t.replaced');
});

it('the handler runs until near its deadline and returns the cursor; invoked again with it, it finishes', async () => {
  const t = await legacyTable(120, handlerTable);
  Object.assign(process.env, { SYNC_TOKEN_KMS_KEY: key, SYNC_TOKEN_KEYS: keyring });
  let checks = 0;
  // The core, with its deadline: plenty of time before the first page, then past the margin.
  const first = await reseal({}, () => (checks++ === 0 ? 300_000 : MARGIN_MS - 1));
  expect(first).toMatchObject({ done: false, cursor: t.users[99], counts: { scanned: 100, resealed: 100 } });
  // The handler as Lambda runs it, resumed from the cursor.
  const context = { getRemainingTimeInMillis: () => 300_000 } as Context;
  const rest = (await handler({ cursor: first.cursor }, context)) as ResealResult;
  expect(rest).toMatchObject({ done: true, counts: { scanned: 20, resealed: 20 } });
  await expect(handler({ cursor: '../x' }, context)).rejects.toThrow(/reseal input: `cursor` must be/);
}, 60_000);

describe('the CLI (npm run sync:reseal)', () => {
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(path.resolve('node_modules/.bin/tsx'), ['tools/cli/sync-reseal.ts', ...args], {
        env: { ...process.env, ...env },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('close', (code) => resolve({ code, out, err }));
    });

  it('says how it is used', async () => {
    const { code, out } = await run(['--help'], {});
    expect(code).toBe(0);
    expect(out).toMatch(/--cursor <id>\s+resume after this user id/);
  }, 30_000);

  it('re-seals against the configured table, stops at --limit with the cursor, and resumes from it', async () => {
    const t = await legacyTable(5);
    const env = { TABLE_SYNC: t.table, SYNC_TOKEN_KMS_KEY: key, SYNC_TOKEN_KEYS: keyring };
    const first = await run(['--limit', '2'], env);
    expect(first.err).toContain(`${t.table}: re-sealing under KMS key ${key}`);
    expect(first.out).toBe(
      `${t.table}: scanned 2, resealed 2, already current 0, changed meanwhile 0, unreadable 0; stopped: resume with --cursor ${t.users[1]}\n`,
    );
    expect(first.code).toBe(0);
    const rest = await run(['--cursor', t.users[1]], env);
    expect(rest.out).toMatch(/scanned 3, resealed 3, .*; done\n$/);
    expect(rest.err).toMatch(/scanned 3, resealed 3, .* cursor /); // the progress line
    const bad = await run(['--limit', 'many'], env);
    expect([bad.code, bad.err]).toEqual([2, expect.stringMatching(/`limit` must be a whole number/)]);
  }, 60_000);
});
