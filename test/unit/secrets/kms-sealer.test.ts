import {
  DecryptCommand,
  DependencyTimeoutException,
  DisabledException,
  GenerateDataKeyCommand,
  IncorrectKeyException,
  InvalidCiphertextException,
  KMSClient,
  KMSInternalException,
  KMSInvalidStateException,
  KMSServiceException,
  NotFoundException,
} from '@aws-sdk/client-kms';
import { createCipheriv, randomBytes } from 'node:crypto';
import { toHttpError } from '../../../lib/http/errors';
import { SecretKeyRefusedError, SecretsUnavailableError, SecretUnreadableError } from '../../../lib/secrets/errors';
import { kmsFailure, KmsSealer, parseK1 } from '../../../lib/secrets/kms-sealer';

/** The KMS sealer's pure parts: its form, its reading of KMS's errors, the order it tries keys in. */
const KEY = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const meta = (status: number) => ({ $metadata: { httpStatusCode: status } });

describe('the k1 form', () => {
  const part = (n: number) => randomBytes(n).toString('base64url');
  const good = ['k1', part(96), part(12), part(20), part(16)];

  it('reads its parts', () => {
    const { encryptedKey, iv, body, tag } = parseK1(good.join('.'));
    expect([encryptedKey.length, iv.length, body.length, tag.length]).toEqual([96, 12, 20, 16]);
  });

  it.each([
    ['another version', ['v1', ...good.slice(1)]],
    ['a short iv', [...good.slice(0, 2), part(8), ...good.slice(3)]],
    ['a cut tag', [...good.slice(0, 4), part(4)]],
    ['a part too many', [...good, part(4)]],
    ['no encrypted key', ['k1', '', ...good.slice(2)]],
    ['characters outside base64url', ['k1', `${part(10)}+/`, ...good.slice(2)]],
  ])('refuses %s as unreadable', (_label, parts) => {
    expect(() => parseK1(parts.join('.'))).toThrow(SecretUnreadableError);
  });
});

describe("KMS's errors, in the project's terms", () => {
  it.each([
    [new DisabledException({ message: `${KEY} is disabled.`, ...meta(400) }), /the key is disabled; enable it/],
    [new KMSInvalidStateException({ message: `${KEY} is pending deletion.`, ...meta(400) }), /pending deletion/],
    [new NotFoundException({ message: 'Key does not exist', ...meta(400) }), /no such key: check SYNC_TOKEN_KMS_KEY/],
    [
      new KMSServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        message: 'not authorized',
        ...meta(400),
      }),
      /this role may not use the key/,
    ],
    [new Error('Could not load credentials from any providers'), /Error: Could not load credentials/],
  ])('a refusal of the key: %s', (err, reason) => {
    const failure = kmsFailure('Decrypt', KEY, err);
    expect(failure).toBeInstanceOf(SecretKeyRefusedError);
    expect(failure.message).toMatch(new RegExp(`^KMS refused Decrypt with key ${KEY}: `));
    expect(failure.message).toMatch(reason);
    expect(toHttpError(failure).status).toBe(500);
  });

  it.each([
    [new InvalidCiphertextException({ message: 'UnknownError', ...meta(400) }), /another context or a tampered value/],
    [new IncorrectKeyException({ message: 'wrong key', ...meta(400) }), /under another KMS key than/],
  ])("the value's own fault: %s", (err, reason) => {
    const failure = kmsFailure('Decrypt', KEY, err);
    expect(failure).toBeInstanceOf(SecretUnreadableError);
    expect(failure.message).toMatch(reason);
    expect(failure.message).not.toMatch(/UnknownError/);
  });

  it.each([
    new KMSInternalException({ message: 'internal', ...meta(500) }),
    new DependencyTimeoutException({ message: 'timeout', ...meta(503) }),
    new KMSServiceException({ name: 'ThrottlingException', $fault: 'client', message: 'Rate exceeded', ...meta(400) }),
    Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
  ])('KMS not answering, a 503 to retry: %s', (err) => {
    const failure = kmsFailure('GenerateDataKey', KEY, err);
    expect(failure).toBeInstanceOf(SecretsUnavailableError);
    expect(toHttpError(failure)).toMatchObject({
      status: 503,
      headers: { 'retry-after': '5' },
      body: { error: { code: 'UNAVAILABLE', message: 'secret store unavailable, retry later' } },
    });
  });
});

describe('opening with several keys (a replaced key during its retirement)', () => {
  // KMS as AWS answers a Decrypt naming another key than the ciphertext's: IncorrectKeyException (moto cannot).
  function fakeKms(sealedUnder: string, dataKey: Buffer) {
    const calls: string[] = [];
    const kms = {
      send: async (command: DecryptCommand | GenerateDataKeyCommand) => {
        calls.push(`${command.constructor.name}:${command.input.KeyId}`);
        if (command.input.KeyId !== sealedUnder)
          throw new IncorrectKeyException({ message: 'not this key', ...meta(400) });
        return { Plaintext: new Uint8Array(dataKey), KeyId: sealedUnder, $metadata: {} };
      },
    };
    return { kms: kms as unknown as KMSClient, calls };
  }
  const sealWith = (dataKey: Buffer, context: string, text: string) => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', dataKey, iv).setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(text), cipher.final()]);
    return ['k1', Buffer.from('edk-under-old-key'), iv, body, cipher.getAuthTag()]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  };

  it('tries the newest key, then the older one the value is under; the cache then spares both', async () => {
    const dataKey = randomBytes(32);
    const { kms, calls } = fakeKms('old', dataKey);
    const sealer = new KmsSealer({ kms, keyIds: ['new', 'old'], purpose: 'sync-token' });
    const sealed = sealWith(dataKey, 'ctx', 'tok_under_old');
    expect(await sealer.open(sealed, 'ctx')).toBe('tok_under_old');
    expect(await sealer.open(sealed, 'ctx')).toBe('tok_under_old');
    expect(calls).toEqual(['DecryptCommand:new', 'DecryptCommand:old']);
    expect(sealer.isCurrent(sealed)).toBe(true); // by its form: `reseal --all` moves it to the new key
  });

  it('under none of them: the current key’s answer, as unreadable', async () => {
    const dataKey = randomBytes(32);
    const { kms } = fakeKms('gone', dataKey);
    const sealer = new KmsSealer({ kms, keyIds: ['new', 'old'], purpose: 'sync-token' });
    await expect(sealer.open(sealWith(dataKey, 'ctx', 'tok'), 'ctx')).rejects.toThrow(
      /under another KMS key than new \(IncorrectKeyException/,
    );
  });
});
