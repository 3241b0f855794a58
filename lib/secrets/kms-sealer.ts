import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { isStorageUnavailable } from '../aws/unavailable';
import { systemClock } from '../clock';
import { DATA_KEY_CACHE_DEFAULTS, DataKeyCache } from './data-key-cache';
import { SecretKeyRefusedError, SecretsUnavailableError, SecretUnreadableError } from './errors';
import type { TokenSealer } from './token-sealer';

/**
 * Envelope encryption under a customer-managed KMS key: each seal asks KMS for
 * a fresh AES-256 data key (GenerateDataKey), seals the value with it
 * (AES-256-GCM, the context as associated data) and keeps only the data key
 * KMS encrypted. Both KMS calls carry the encryption context
 * {purpose, context}: KMS refuses to decrypt a data key under any other, so a
 * sealed value copied onto another user's row does not open, and CloudTrail
 * names the row of every Decrypt.
 *
 *   sealed = "k1.<encrypted data key>.<iv>.<ciphertext>.<tag>"   (base64url parts)
 */

export interface KmsSealerOptions {
  kms: KMSClient;
  /** Key ARNs or ids, newest first: the first seals, every one opens (a replaced key until it retires). */
  keyIds: readonly string[];
  /** The context's `purpose`: what the key is used for (a key policy may require it). */
  purpose: string;
  cache?: DataKeyCache;
}

const K1 = /^k1\.([A-Za-z0-9_-]{1,8192})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]{22})$/;

/** The parts of a "k1." value; SecretUnreadableError when it is not one. */
export function parseK1(sealed: string): { encryptedKey: Buffer; iv: Buffer; body: Buffer; tag: Buffer } {
  const m = K1.exec(sealed);
  if (!m) throw new SecretUnreadableError('not a k1 sealed value');
  const [encryptedKey, iv, body, tag] = m.slice(1).map((part) => Buffer.from(part, 'base64url'));
  return { encryptedKey, iv, body, tag };
}

export class KmsSealer implements TokenSealer {
  private readonly cache: DataKeyCache;

  constructor(private readonly opts: KmsSealerOptions) {
    if (opts.keyIds.length === 0) throw new Error('KmsSealer needs at least one key');
    this.cache = opts.cache ?? new DataKeyCache({ ...DATA_KEY_CACHE_DEFAULTS, now: systemClock });
  }

  async seal(plaintext: string, context: string): Promise<string> {
    const keyId = this.opts.keyIds[0];
    const answer = await this.opts.kms
      .send(
        new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: this.kmsContext(context) }),
      )
      .catch((err: unknown) => {
        throw kmsFailure('GenerateDataKey', keyId, err);
      });
    if (answer.Plaintext?.length !== 32 || !answer.CiphertextBlob?.length)
      throw new SecretKeyRefusedError('GenerateDataKey', keyId, 'the answer carried no 32-byte data key');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', answer.Plaintext, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    answer.Plaintext.fill(0);
    return ['k1', Buffer.from(answer.CiphertextBlob), iv, body, cipher.getAuthTag()]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  async open(sealed: string, context: string): Promise<string> {
    const { encryptedKey, iv, body, tag } = parseK1(sealed);
    const dataKey = await this.cache.get(encryptedKey, context, () => this.decryptDataKey(encryptedKey, context));
    try {
      const decipher = createDecipheriv('aes-256-gcm', dataKey, iv, { authTagLength: 16 });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadableError('authentication failed (another context or a tampered value)');
    }
  }

  opens(sealed: string): boolean {
    return sealed.startsWith('k1.');
  }

  /** Every "k1." value: KMS rotates its key material itself, and old material keeps decrypting. */
  isCurrent(sealed: string): boolean {
    return this.opens(sealed);
  }

  private kmsContext(context: string): Record<string, string> {
    return { purpose: this.opts.purpose, context };
  }

  /**
   * Decrypt names the key (KMS then refuses a data key of any other): each
   * configured key in turn, moving on only when the value is under another
   * key. The first other refusal is the answer, else the current key's.
   */
  private async decryptDataKey(encryptedKey: Buffer, context: string): Promise<Buffer> {
    let first: Error | undefined;
    for (const keyId of this.opts.keyIds) {
      try {
        const answer = await this.opts.kms.send(
          new DecryptCommand({
            CiphertextBlob: encryptedKey,
            KeyId: keyId,
            EncryptionContext: this.kmsContext(context),
          }),
        );
        if (answer.Plaintext?.length !== 32)
          throw new SecretKeyRefusedError('Decrypt', keyId, 'the answer carried no 32-byte data key');
        return Buffer.from(answer.Plaintext);
      } catch (err) {
        const failure = kmsFailure('Decrypt', keyId, err);
        if (!underAnotherKey(err)) throw failure;
        first ??= failure;
      }
    }
    throw first!;
  }
}

/**
 * KMS's "this ciphertext is not under the key you named": IncorrectKeyException
 * on AWS; moto answers AccessDeniedException, which AWS also sends when the role
 * may not use that key, so both move on to the next key.
 */
const underAnotherKey = (err: unknown) => ['IncorrectKeyException', 'AccessDeniedException'].includes(errorName(err));

const errorName = (err: unknown) => (err instanceof Error ? err.name : typeof err);

/** Why KMS refused, in the operator's terms: what to check, and KMS's own name for it. */
const REFUSALS: Record<string, string> = {
  DisabledException: 'the key is disabled; enable it (docs/security.md, retiring a key)',
  KMSInvalidStateException:
    'the key cannot be used in its state (pending deletion?); cancel the deletion and enable it',
  NotFoundException: 'no such key: check SYNC_TOKEN_KMS_KEY',
  AccessDeniedException: "this role may not use the key: check the key policy and the function's role",
  InvalidKeyUsageException: 'the key is not a symmetric encryption key',
};

// KMS's own "try again" errors (5xx); throttling, other 5xx and the network are lib/aws/unavailable's.
const TRANSIENT = new Set(['KMSInternalException', 'DependencyTimeoutException', 'KeyUnavailableException']);

/** A KMS error as one of this module's: the value's fault, the key's state, or KMS not answering. */
export function kmsFailure(operation: string, keyId: string, err: unknown): Error {
  if (
    err instanceof SecretUnreadableError ||
    err instanceof SecretKeyRefusedError ||
    err instanceof SecretsUnavailableError
  )
    return err;
  const name = errorName(err);
  // The SDK says "UnknownError" when the service sent no message (moto often does not).
  const said = err instanceof Error && err.message && err.message !== 'UnknownError' ? `: ${err.message}` : '';
  const cause = { cause: err };
  if (name === 'InvalidCiphertextException')
    return new SecretUnreadableError(`KMS refused the data key: another context or a tampered value (${name})`);
  if (name === 'IncorrectKeyException')
    return new SecretUnreadableError(`the data key is under another KMS key than ${keyId} (${name})`);
  if (name in REFUSALS) return new SecretKeyRefusedError(operation, keyId, `${REFUSALS[name]} (${name}${said})`, cause);
  if (TRANSIENT.has(name) || isStorageUnavailable(err))
    return new SecretsUnavailableError(operation, `${name}${said}`, cause);
  return new SecretKeyRefusedError(operation, keyId, `${name}${said}`, cause);
}
