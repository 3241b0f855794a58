import {
  CancelKeyDeletionCommand,
  CreateKeyCommand,
  DecryptCommand,
  DisableKeyCommand,
  EnableKeyCommand,
  KMSClient,
  ScheduleKeyDeletionCommand,
} from '@aws-sdk/client-kms';
import { createKmsClient } from '../../../lib/aws/kms';
import { DataKeyCache } from '../../../lib/secrets/data-key-cache';
import { SecretKeyRefusedError, SecretUnreadableError } from '../../../lib/secrets/errors';
import { KmsSealer } from '../../../lib/secrets/kms-sealer';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import { tokenSealer } from '../../../lib/sync/wiring';
import { startMoto, type Moto } from '../../support/moto';

/**
 * The KMS sealer against a real KMS implementation: moto's server (with AWS's
 * key-state rule, test/support/moto-kms.py), through the client the functions
 * use (lib/aws/kms.ts, its endpoint from AWS_ENDPOINT_URL_KMS). Each KMS call
 * is counted by a middleware on that client.
 */
let moto: Moto;
let kms: KMSClient;
let key: string;
const calls: string[] = [];
const ctx = (user: string) => `sync-connection:${user}`;
const sealerFor = (keyIds = [key], cache?: DataKeyCache) =>
  new KmsSealer({ kms, keyIds, purpose: 'sync-token', cache });
const newKey = async () =>
  (await kms.send(new CreateKeyCommand({ Description: 'sync tokens (test)' }))).KeyMetadata!.Arn!;
const counted = (name: string) => calls.filter((c) => c === name).length;
// moto's DisableKey, EnableKey and the deletion calls take the key id only (AWS takes the ARN too).
const idOf = (arn: string) => arn.split('/').pop()!;

beforeAll(async () => {
  moto = await startMoto();
  process.env.AWS_ENDPOINT_URL_KMS = moto.endpoint;
  kms = createKmsClient('us-east-1');
  kms.middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(context.commandName!.replace(/Command$/, ''));
      return next(args);
    },
    { step: 'initialize', name: 'countCalls' },
  );
  key = await newKey();
}, 60_000);
afterAll(async () => {
  kms?.destroy();
  await moto?.stop();
});
beforeEach(() => void calls.splice(0));

it('seals with one GenerateDataKey per value and opens through Decrypt; the value holds no plaintext', async () => {
  const sealer = sealerFor();
  const sealed = await sealer.seal('t.secret-brokerage-token', ctx('a'));
  const again = await sealer.seal('t.secret-brokerage-token', ctx('a'));
  expect(sealed).toMatch(/^k1\.[\w-]+\.[\w-]{16}\.[\w-]+\.[\w-]{22}$/);
  expect(sealed).not.toContain('secret');
  expect(again.split('.')[1]).not.toBe(sealed.split('.')[1]); // a data key per value
  expect(calls).toEqual(['GenerateDataKey', 'GenerateDataKey']);
  expect(await sealerFor().open(sealed, ctx('a'))).toBe('t.secret-brokerage-token');
  expect(counted('Decrypt')).toBe(1);
});

it('a value copied onto another user does not open: KMS refuses the data key under that context', async () => {
  const sealed = await sealerFor().seal('t.victim', ctx('victim'));
  const sealer = sealerFor();
  expect(await sealer.open(sealed, ctx('victim'))).toBe('t.victim');
  // Even with the victim's data key in this container's cache: the cache is per context, so KMS is asked.
  await expect(sealer.open(sealed, ctx('thief'))).rejects.toThrow(
    /KMS refused the data key: another context or a tampered value \(InvalidCiphertextException\)/,
  );
  expect(counted('Decrypt')).toBe(2);
});

it('a tampered value does not open, whichever part was changed', async () => {
  const sealed = await sealerFor().seal('t.tamper-me', ctx('a'));
  const parts = sealed.split('.');
  for (const i of [1, 2, 3, 4]) {
    const bytes = Buffer.from(parts[i], 'base64url');
    bytes[bytes.length - 1] ^= 1;
    const tampered = parts.map((p, j) => (j === i ? bytes.toString('base64url') : p)).join('.');
    await expect(sealerFor().open(tampered, ctx('a'))).rejects.toThrow(SecretUnreadableError);
  }
});

it('the data-key cache: N opens in one container make one Decrypt, until five minutes pass', async () => {
  let now = 0;
  const sealer = sealerFor([key], new DataKeyCache({ maxAgeMs: 300_000, maxEntries: 100, now: () => now }));
  const sealed = await sealer.seal('t.cached', ctx('a'));
  const opened = await Promise.all(Array.from({ length: 5 }, () => sealer.open(sealed, ctx('a'))));
  for (let i = 0; i < 5; i++) opened.push(await sealer.open(sealed, ctx('a')));
  expect(opened).toEqual(Array(10).fill('t.cached'));
  expect(counted('Decrypt')).toBe(1);
  now = 300_000;
  await sealer.open(sealed, ctx('a'));
  expect(counted('Decrypt')).toBe(2);
});

it('a disabled key refuses to open and to seal, saying so; enabled again, the same value opens', async () => {
  const disabled = await newKey();
  const sealed = await sealerFor([disabled]).seal('t.under-disabled', ctx('a'));
  await kms.send(new DisableKeyCommand({ KeyId: idOf(disabled) }));
  const open = sealerFor([disabled]).open(sealed, ctx('a'));
  await expect(open).rejects.toThrow(SecretKeyRefusedError);
  await expect(open).rejects.toThrow(
    `KMS refused Decrypt with key ${disabled}: the key is disabled; enable it (docs/security.md, retiring a key) (DisabledException: ${disabled} is disabled.)`,
  );
  await expect(sealerFor([disabled]).seal('t', ctx('a'))).rejects.toThrow(/refused GenerateDataKey .* is disabled/);
  await kms.send(new EnableKeyCommand({ KeyId: idOf(disabled) }));
  expect(await sealerFor([disabled]).open(sealed, ctx('a'))).toBe('t.under-disabled');
});

it('a key pending deletion refuses too; cancelling the deletion and enabling it brings the values back', async () => {
  const doomed = await newKey();
  const sealed = await sealerFor([doomed]).seal('t.doomed', ctx('a'));
  await kms.send(new ScheduleKeyDeletionCommand({ KeyId: idOf(doomed), PendingWindowInDays: 30 }));
  await expect(sealerFor([doomed]).open(sealed, ctx('a'))).rejects.toThrow(
    /the key cannot be used in its state \(pending deletion\?\).*KMSInvalidStateException/,
  );
  await kms.send(new CancelKeyDeletionCommand({ KeyId: idOf(doomed) }));
  await kms.send(new EnableKeyCommand({ KeyId: idOf(doomed) }));
  expect(await sealerFor([doomed]).open(sealed, ctx('a'))).toBe('t.doomed');
});

it('a container that opened a value keeps opening it at most five minutes after its key is disabled', async () => {
  const disabled = await newKey();
  let now = 0;
  const sealer = sealerFor([disabled], new DataKeyCache({ maxAgeMs: 300_000, maxEntries: 100, now: () => now }));
  const sealed = await sealer.seal('t.cached-then-disabled', ctx('a'));
  await sealer.open(sealed, ctx('a'));
  await kms.send(new DisableKeyCommand({ KeyId: idOf(disabled) }));
  now = 299_000;
  expect(await sealer.open(sealed, ctx('a'))).toBe('t.cached-then-disabled');
  now = 300_000;
  await expect(sealer.open(sealed, ctx('a'))).rejects.toThrow(/the key is disabled/);
});

it('a key that does not exist, and a value under a key not configured, are named as such', async () => {
  const missing = 'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-000000000000';
  await expect(sealerFor([missing]).seal('t', ctx('a'))).rejects.toThrow(/no such key: check SYNC_TOKEN_KMS_KEY/);
  const other = await newKey();
  const sealed = await sealerFor([other]).seal('t.other', ctx('a'));
  // AWS says IncorrectKeyException; moto says AccessDeniedException (docs/security.md): refused either way.
  await expect(sealerFor([key]).open(sealed, ctx('a'))).rejects.toThrow(/refused Decrypt|another KMS key/);
  expect(await sealerFor([key, other]).open(sealed, ctx('a'))).toBe('t.other');
});

it('as deployed (lib/sync/wiring.ts): KMS seals, and the legacy keyring still opens its "v1." values', async () => {
  const keyring = newKeyringEntry('legacy');
  const legacy = await new SecretSealer(parseKeyring(keyring).keyring!).seal('t.legacy', ctx('a'));
  const sealer = await tokenSealer({ SYNC_TOKEN_KMS_KEY: key, SYNC_TOKEN_KEYS: keyring });
  expect(await sealer.open(legacy, ctx('a'))).toBe('t.legacy');
  expect(sealer.isCurrent(legacy)).toBe(false);
  const fresh = await sealer.seal('t.fresh', ctx('a'));
  expect(fresh).toMatch(/^k1\./);
  expect(await sealer.open(fresh, ctx('a'))).toBe('t.fresh');
  // Without the keyring, a legacy value is refused by its form: the migration must have run first.
  await expect((await tokenSealer({ SYNC_TOKEN_KMS_KEY: key })).open(legacy, ctx('a'))).rejects.toThrow(
    /no configured sealer opens this value \(form: v1\)/,
  );
});

describe('moto as shipped (the gap test/support/moto-kms.py fills)', () => {
  let plain: Moto;
  afterAll(async () => plain?.stop());

  it('enforces the encryption context, but still decrypts under a disabled key', async () => {
    plain = await startMoto({ kmsKeyState: 'as-shipped' });
    const client = new KMSClient({
      region: 'us-east-1',
      endpoint: plain.endpoint,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    try {
      const arn = (await client.send(new CreateKeyCommand({}))).KeyMetadata!.Arn!;
      const sealed = await new KmsSealer({ kms: client, keyIds: [arn], purpose: 'p' }).seal('t', ctx('a'));
      await expect(new KmsSealer({ kms: client, keyIds: [arn], purpose: 'p' }).open(sealed, ctx('b'))).rejects.toThrow(
        /InvalidCiphertextException/,
      );
      await client.send(new DisableKeyCommand({ KeyId: idOf(arn) }));
      const blob = Buffer.from(sealed.split('.')[1], 'base64url');
      const answer = await client.send(
        new DecryptCommand({
          CiphertextBlob: blob,
          KeyId: arn,
          EncryptionContext: { purpose: 'p', context: ctx('a') },
        }),
      );
      expect(answer.Plaintext).toHaveLength(32); // AWS: DisabledException. When this fails, moto caught up.
    } finally {
      client.destroy();
    }
  }, 60_000);
});
