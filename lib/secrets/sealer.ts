import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { SecretUnreadableError } from './errors';
import type { TokenSealer } from './token-sealer';

/**
 * Secrets at rest under a keyring from config: AES-256-GCM, the local
 * TokenSealer (on AWS, KMS seals: kms-sealer.ts; this one then only opens
 * legacy values). The first key seals; every key opens, so a key can be
 * rotated in without a flag day (docs/security.md). The sealed form names its
 * key and binds a context (e.g. the user), so a sealed value copied onto
 * another row does not open.
 *
 *   sealed = "v1.<key id>.<iv>.<ciphertext>.<tag>"   (base64url parts)
 */

export interface Keyring {
  /** Seals new values. */
  current: string;
  keys: ReadonlyMap<string, Buffer>;
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** `id:base64key[,id:base64key...]`, newest first; each key 32 bytes. Returns every problem found. */
export function parseKeyring(text: string): { keyring?: Keyring; problems: string[] } {
  const problems: string[] = [];
  const keys = new Map<string, Buffer>();
  for (const [i, entry] of text
    .split(',')
    .map((e) => e.trim())
    .entries()) {
    const [id, material, ...rest] = entry.split(':');
    if (!id || !KEY_ID.test(id) || material === undefined || rest.length > 0) {
      problems.push(`key ${i + 1} must be <id>:<base64 of 32 bytes>, the id 1-32 [A-Za-z0-9_-]`);
      continue;
    }
    const key = Buffer.from(material, 'base64');
    if (key.length !== 32) problems.push(`key ${JSON.stringify(id)} must be 32 bytes of base64, got ${key.length}`);
    else if (keys.has(id)) problems.push(`key id ${JSON.stringify(id)} appears twice`);
    else keys.set(id, key);
  }
  if (problems.length > 0 || keys.size === 0)
    return { problems: problems.length > 0 ? problems : ['must name at least one key'] };
  return { keyring: { current: keys.keys().next().value!, keys }, problems };
}

/** A new keyring entry, for setup and rotation (`npm run token -- key`). */
export function newKeyringEntry(id: string): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

export class SecretSealer implements TokenSealer {
  constructor(private readonly keyring: Keyring) {}

  async seal(plaintext: string, context: string): Promise<string> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keyring.keys.get(this.keyring.current)!, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      'v1',
      this.keyring.current,
      iv.toString('base64url'),
      body.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
    ].join('.');
  }

  async open(sealed: string, context: string): Promise<string> {
    const [version, keyId, iv, body, tag, ...rest] = sealed.split('.');
    if (version !== 'v1' || rest.length > 0 || tag === undefined)
      throw new SecretUnreadableError('not a v1 sealed value');
    const key = this.keyring.keys.get(keyId);
    if (!key) throw new SecretUnreadableError(`key ${JSON.stringify(keyId)} is not in the keyring`);
    try {
      // authTagLength: GCM would otherwise accept a tag cut to 4 bytes, a forgery 2^32 tries away.
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadableError('authentication failed (wrong key, context or a tampered value)');
    }
  }

  opens(sealed: string): boolean {
    return sealed.startsWith('v1.');
  }

  /** Under the current key; a value under an older one is re-sealed by the reseal (rotation). */
  isCurrent(sealed: string): boolean {
    const [version, keyId] = sealed.split('.', 2);
    return version === 'v1' && keyId === this.keyring.current;
  }
}
