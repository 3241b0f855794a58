import { ConfigError } from '../../../lib/config';
import { loadTokenSealing } from '../../../lib/sync/config';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import { SecretUnreadableError } from '../../../lib/secrets/errors';
import { sealerChain, type TokenSealer } from '../../../lib/secrets/token-sealer';

const ring = (text: string) => new SecretSealer(parseKeyring(text).keyring!);
const k1 = newKeyringEntry('k1');
const k2 = newKeyringEntry('k2');
const ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

describe('SecretSealer (the keyring)', () => {
  it('round-trips under its context, and never shows the plaintext', async () => {
    const sealer = ring(k1);
    const sealed = await sealer.seal('tok_secret_value', 'user-a');
    expect(sealed).toMatch(/^v1\.k1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('tok_secret_value');
    expect(await sealer.open(sealed, 'user-a')).toBe('tok_secret_value');
    expect(await sealer.seal('tok_secret_value', 'user-a')).not.toBe(sealed); // fresh IV each time
  });

  it('refuses another context, a tampered value, a cut tag, an unknown key and garbage', async () => {
    const sealer = ring(k1);
    const sealed = await sealer.seal('tok_secret_value', 'user-a');
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[3], 'base64url');
    flipped[0] ^= 1;
    const cutTag = Buffer.from(parts[4], 'base64url').subarray(0, 4).toString('base64url');
    for (const [value, context] of [
      [sealed, 'user-b'],
      [[...parts.slice(0, 3), flipped.toString('base64url'), parts[4]].join('.'), 'user-a'],
      [[...parts.slice(0, 4), cutTag].join('.'), 'user-a'],
      [await ring(k2).seal('tok', 'user-a'), 'user-a'],
      ['tok_plaintext', 'user-a'],
      ['v1.k1.x.y', 'user-a'],
    ]) {
      await expect(sealer.open(value, context)).rejects.toThrow(SecretUnreadableError);
    }
  });

  it('rotates: the newest key seals, older keys still open, and only the newest is current', async () => {
    const old = await ring(k1).seal('tok', 'u');
    const rotated = ring(`${k2},${k1}`);
    expect(await rotated.open(old, 'u')).toBe('tok');
    expect(rotated.isCurrent(old)).toBe(false);
    const fresh = await rotated.seal('tok', 'u');
    expect(fresh.split('.')[1]).toBe('k2');
    expect(rotated.isCurrent(fresh)).toBe(true);
    expect(rotated.opens('k1.abc')).toBe(false);
  });
});

describe('sealerChain', () => {
  // A stand-in current sealer with its own form: what the chain does is routing, tested here without KMS.
  const reversed: TokenSealer = {
    seal: async (p, c) => `r1.${c}.${[...p].reverse().join('')}`,
    open: async (s, c) => {
      const [, context, body] = s.split('.');
      if (context !== c) throw new SecretUnreadableError('context');
      return [...body].reverse().join('');
    },
    opens: (s) => s.startsWith('r1.'),
    isCurrent: (s) => s.startsWith('r1.'),
  };

  it('seals with the current sealer, opens both forms, and calls only the current form current', async () => {
    const legacy = ring(k1);
    const chain = sealerChain(reversed, legacy);
    const old = await legacy.seal('tok', 'u');
    const fresh = await chain.seal('tok', 'u');
    expect(fresh).toBe('r1.u.kot');
    expect(await chain.open(old, 'u')).toBe('tok');
    expect(await chain.open(fresh, 'u')).toBe('tok');
    expect([chain.isCurrent(old), chain.isCurrent(fresh)]).toEqual([false, true]);
    expect(chain.opens(old) && chain.opens(fresh)).toBe(true);
  });

  it('refuses a form no sealer of the chain reads, naming the form only', async () => {
    const chain = sealerChain(reversed);
    await expect(chain.open(await ring(k1).seal('tok_secret', 'u'), 'u')).rejects.toThrow(
      /no configured sealer opens this value \(form: v1\)/,
    );
    await expect(chain.open('tok_plaintext_secret', 'u')).rejects.toThrow(/\(form: unknown\)$/);
  });
});

describe('the sealing settings (SYNC_TOKEN_KMS_KEY, SYNC_TOKEN_KEYS)', () => {
  it('is the keyring alone without KMS, KMS alone, or KMS with the keyring opening legacy values', () => {
    expect(loadTokenSealing({ SYNC_TOKEN_KEYS: k1 })).toMatchObject({ kmsKeys: [], keyring: { current: 'k1' } });
    expect(loadTokenSealing({ SYNC_TOKEN_KMS_KEY: ARN })).toEqual({ kmsKeys: [ARN] });
    const both = loadTokenSealing({ SYNC_TOKEN_KMS_KEY: ` ${ARN} , alias/old-key `, SYNC_TOKEN_KEYS: k1 });
    expect(both.kmsKeys).toEqual([ARN, 'alias/old-key']);
    expect(both.keyring?.current).toBe('k1');
    expect(loadTokenSealing({ SYNC_TOKEN_KMS_KEY: '1234abcd-12ab-34cd-56ef-1234567890ab' }).kmsKeys).toHaveLength(1);
  });

  it.each([
    ['neither', {}, /SYNC_TOKEN_KEYS is required .*or SYNC_TOKEN_KMS_KEY/],
    ['a KMS key that is no key', { SYNC_TOKEN_KMS_KEY: 'my key' }, /SYNC_TOKEN_KMS_KEY must be KMS key ARNs/],
    ['a KMS key twice', { SYNC_TOKEN_KMS_KEY: `${ARN},${ARN}` }, /names a key twice/],
    ['a bad keyring beside KMS', { SYNC_TOKEN_KMS_KEY: ARN, SYNC_TOKEN_KEYS: 'k1:short' }, /32 bytes/],
  ])('refuses %s', (_label, env, message) => {
    expect(() => loadTokenSealing(env)).toThrow(ConfigError);
    expect(() => loadTokenSealing(env)).toThrow(message);
  });

  it.each([
    ['a short key', 'k1:' + Buffer.alloc(16).toString('base64'), /32 bytes/],
    ['no id', Buffer.alloc(32).toString('base64'), /<id>:<base64/],
    ['a repeated id', `${k1},${newKeyringEntry('k1')}`, /twice/],
  ])('refuses a keyring with %s, without echoing key material', (_label, value, message) => {
    const load = () => loadTokenSealing({ SYNC_TOKEN_KEYS: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(message);
    try {
      load();
    } catch (err) {
      for (const part of value.split(/[,:]/).filter((p) => p.length > 20))
        expect((err as Error).message).not.toContain(part);
    }
  });
});
