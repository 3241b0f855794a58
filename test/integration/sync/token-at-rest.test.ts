import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { newId } from '../../../lib/ident';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import { SecretUnreadableError } from '../../../lib/secrets/errors';
import { DynamoSyncStore } from '../../../lib/sync/dynamodb-store';
import { connectionKey } from '../../../lib/sync/keys';
import { resealTokens } from '../../../lib/sync/reseal';
import { silentLogger } from '../../../lib/log';
import { syncServices } from '../../support/sync';
import { isolatedTable, stackClients } from '../../support/stack';

/** Brokerage tokens at rest under the keyring, on DynamoDB Local: sealed, bound to their row, rotated by the reseal. */
const aws = stackClients();
const oldKey = newKeyringEntry('2026a');
const newKey = newKeyringEntry('2026b');
const sealerOf = (text: string) => {
  const sealer = new SecretSealer(parseKeyring(text).keyring!);
  return async () => sealer;
};
const storeOf = () => new DynamoSyncStore({ documents: aws.documents, table: table.name });
let table: { name: string; drop: () => Promise<void> };
const connectionsWith = (keys: string) =>
  syncServices({ documents: aws.documents, table: table.name, waitBoundMs: 60_000, sealer: sealerOf(keys) })
    .connections;
const rawItem = async (user: string) =>
  (await aws.documents.send(new GetCommand({ TableName: table.name, Key: connectionKey(user), ConsistentRead: true })))
    .Item!;

beforeAll(async () => {
  table = await isolatedTable(aws, 'SyncTable');
});
afterAll(async () => {
  await table.drop();
  aws.dynamodb.destroy();
});

it('stores the token sealed: the item holds no plaintext, and the store opens it', async () => {
  const user = newId();
  const token = `tok_${newId()}`;
  await connectionsWith(oldKey).putConnection(user, token, Date.now());
  const item = await rawItem(user);
  expect(JSON.stringify(item)).not.toContain(token);
  expect(item.token).toBeUndefined();
  expect(item.token_sealed).toMatch(/^v1\.2026a\./);
  expect(await connectionsWith(oldKey).connectionToken(user)).toBe(token);
});

it('a sealed token copied onto another user does not open there', async () => {
  const [victim, thief] = [newId(), newId()];
  const connections = connectionsWith(oldKey);
  await connections.putConnection(victim, 'tok_victim_secret', Date.now());
  await connections.putConnection(thief, 'tok_thief', Date.now());
  const stolen = (await rawItem(victim)).token_sealed;
  await aws.documents.send(
    new PutCommand({ TableName: table.name, Item: { ...(await rawItem(thief)), token_sealed: stolen } }),
  );
  await expect(connections.connectionToken(thief)).rejects.toThrow(SecretUnreadableError);
});

it('rotation: reading never re-seals; the reseal moves every value to the new key once; then the old key can go', async () => {
  const user = newId();
  await connectionsWith(oldKey).putConnection(user, 'tok_rotate_me', Date.now());
  const rotated = connectionsWith(`${newKey},${oldKey}`);
  expect(await rotated.connectionToken(user)).toBe('tok_rotate_me');
  expect((await rawItem(user)).token_sealed).toMatch(/^v1\.2026a\./); // a read needs no write (or KMS seal) rights
  // The table is this file's: the copied value of the test above stays unreadable, the rest moves.
  const deps = { store: storeOf(), sealer: await sealerOf(`${newKey},${oldKey}`)(), log: silentLogger };
  const first = await resealTokens(deps);
  expect(first.counts.resealed).toBeGreaterThanOrEqual(1);
  const resealed = (await rawItem(user)).token_sealed;
  expect(resealed).toMatch(/^v1\.2026b\./);
  const second = (await resealTokens(deps)).counts;
  expect(second).toMatchObject({ resealed: 0, changed: 0, current: first.counts.resealed });
  expect((await rawItem(user)).token_sealed).toBe(resealed);
  expect(await connectionsWith(newKey).connectionToken(user)).toBe('tok_rotate_me');
});
