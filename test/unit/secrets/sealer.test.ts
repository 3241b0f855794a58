import { ConfigError } from '../../../lib/config';
import { loadTokenKeyring } from '../../../lib/sync/config';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import { SecretUnreadableError } from '../../../lib/secrets/errors';

const ring = (text: string) => new SecretSealer(parseKeyring(text).keyring!);
const k1 = newKeyringEntry('k1');
const k2 = newKeyringEntry('k2');

describe('SecretSealer', () => {
  it('round-trips under its context, and never shows the plaintext', () => {
    const sealer = ring(k1);
    const sealed = sealer.seal('tok_secret_value', 'user-a');
    expect(sealed).toMatch(/^v1\.k1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('tok_secret_value');
    expect(sealer.open(sealed, 'user-a')).toBe('tok_secret_value');
    expect(sealer.seal('tok_secret_value', 'user-a')).not.toBe(sealed); // fresh IV each time
  });

  it('refuses another context, a tampered value, an unknown key and garbage', () => {
    const sealer = ring(k1);
    const sealed = sealer.seal('tok_secret_value', 'user-a');
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[3], 'base64url');
    flipped[0] ^= 1;
    for (const [value, context] of [
      [sealed, 'user-b'],
      [[...parts.slice(0, 3), flipped.toString('base64url'), parts[4]].join('.'), 'user-a'],
      [ring(k2).seal('tok', 'user-a'), 'user-a'],
      ['tok_plaintext', 'user-a'],
      ['v1.k1.x.y', 'user-a'],
    ]) {
      expect(() => sealer.open(value, context)).toThrow(SecretUnreadableError);
    }
  });

  it('rotates: the newest key seals, older keys still open, and their values are stale', () => {
    const old = ring(k1).seal('tok', 'u');
    const rotated = ring(`${k2},${k1}`);
    expect(rotated.open(old, 'u')).toBe('tok');
    expect(rotated.isStale(old)).toBe(true);
    const fresh = rotated.seal('tok', 'u');
    expect(fresh.split('.')[1]).toBe('k2');
    expect(rotated.isStale(fresh)).toBe(false);
  });
});

describe('SYNC_TOKEN_KEYS', () => {
  it.each([
    ['unset', undefined, /SYNC_TOKEN_KEYS is required/],
    ['a short key', 'k1:' + Buffer.alloc(16).toString('base64'), /32 bytes/],
    ['no id', Buffer.alloc(32).toString('base64'), /<id>:<base64/],
    ['a repeated id', `${k1},${newKeyringEntry('k1')}`, /twice/],
  ])('refuses %s, without echoing key material', (_label, value, message) => {
    const load = () => loadTokenKeyring({ SYNC_TOKEN_KEYS: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(message);
    try {
      load();
    } catch (err) {
      if (value)
        for (const part of value.split(/[,:]/).filter((p) => p.length > 20))
          expect((err as Error).message).not.toContain(part);
    }
  });
});
