import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newId } from '../../../lib/ident';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import { SecretUnreadableError } from '../../../lib/secrets/errors';
import { connectionKey } from '../../../lib/sync/keys';
import { syncServices } from '../../support/sync';
import { isolatedTable, stackClients } from '../../support/stack';

/** Brokerage tokens at rest, on DynamoDB Local: sealed, bound to their row, rotated on read. */
const aws = stackClients();
const oldKey = newKeyringEntry('2026a');
const newKey = newKeyringEntry('2026b');
const sealerOf = (text: string) => {
  const sealer = new SecretSealer(parseKeyring(text).keyring!);
  return () => sealer;
};
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

it('rotation: after the new key is put first, reading re-seals once under it; then the old key can go', async () => {
  const user = newId();
  await connectionsWith(oldKey).putConnection(user, 'tok_rotate_me', Date.now());
  const rotated = connectionsWith(`${newKey},${oldKey}`);
  expect(await rotated.connectionToken(user)).toBe('tok_rotate_me');
  const resealed = (await rawItem(user)).token_sealed;
  expect(resealed).toMatch(/^v1\.2026b\./);
  expect(await rotated.connectionToken(user)).toBe('tok_rotate_me');
  expect((await rawItem(user)).token_sealed).toBe(resealed); // current: no second write
  expect(await connectionsWith(newKey).connectionToken(user)).toBe('tok_rotate_me');
});

it('rotation never overwrites a token replaced between the read and the re-seal', async () => {
  const user = newId();
  await connectionsWith(oldKey).putConnection(user, 'tok_before', Date.now());
  // A new token lands exactly between the rotation's read and its re-seal.
  const documents = Object.create(aws.documents) as typeof aws.documents;
  let raced = false;
  documents.send = (async (command: unknown) => {
    if (command instanceof UpdateCommand && !raced) {
      raced = true;
      await connectionsWith(newKey).putConnection(user, 'tok_after', Date.now());
    }
    return aws.documents.send(command as GetCommand);
  }) as typeof documents.send;
  const rotating = syncServices({
    documents,
    table: table.name,
    waitBoundMs: 60_000,
    sealer: sealerOf(`${newKey},${oldKey}`),
  }).connections;
  expect(await rotating.connectionToken(user)).toBe('tok_before');
  expect(raced).toBe(true);
  expect(await connectionsWith(newKey).connectionToken(user)).toBe('tok_after');
});
