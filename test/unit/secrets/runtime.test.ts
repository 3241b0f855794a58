import { environmentGeneration, perEnvironment } from '../../../lib/config';
import { SecretReadError } from '../../../lib/secrets/errors';
import { applySecrets, cacheSeconds, refreshSecrets, SecretSource, secretRefs } from '../../../lib/secrets/runtime';

/** A Secrets Manager stand-in: the texts by id, and every read counted. */
function source(texts: Record<string, string | undefined>) {
  const reads: string[] = [];
  const src: SecretSource & { reads: string[]; texts: typeof texts } = {
    reads,
    texts,
    get: async (id) => {
      reads.push(id);
      if (!(id in texts)) throw new Error(`ResourceNotFoundException: ${id}`);
      return texts[id];
    },
  };
  return src;
}

describe('secretRefs', () => {
  it('reads <VAR>_SECRET_ID as a whole secret or one JSON field, and ignores empty ones', () => {
    expect(
      secretRefs({
        AUTH_TOKENS_SECRET_ID: 'svc/prod/auth-tokens',
        NATS_USER_SECRET_ID: 'svc/prod/nats#user',
        SCAN_SMB_PASSWORD_SECRET_ID: '',
        AUTH_TOKENS: 'ignored here',
      }),
    ).toEqual([
      { variable: 'AUTH_TOKENS', secretId: 'svc/prod/auth-tokens' },
      { variable: 'NATS_USER', secretId: 'svc/prod/nats', jsonKey: 'user' },
    ]);
  });

  it.each([['a#b#c'], ['../x y'], ['svc/prod/x\u0000']])('refuses a malformed reference %j, by name', (value) => {
    expect(() => secretRefs({ NATS_USER_SECRET_ID: value })).toThrow(/NATS_USER_SECRET_ID must be/);
  });

  it('takes a value whose own name ends in _SECRET for a value, not a reference', () => {
    expect(secretRefs({ TELEGRAM_WEBHOOK_SECRET: 'a-webhook-secret-value' })).toEqual([]);
  });

  it('refuses a variable name that is not an environment name', () => {
    expect(() => secretRefs({ 'lower-case_SECRET_ID': 'svc/x' })).toThrow(SecretReadError);
  });
});

describe('cacheSeconds', () => {
  it('defaults to 60 s and never exceeds five minutes', () => {
    expect(cacheSeconds({})).toBe(60);
    expect(cacheSeconds({ SECRETS_CACHE_SECONDS: '0' })).toBe(0);
    expect(cacheSeconds({ SECRETS_CACHE_SECONDS: '300' })).toBe(300);
    for (const bad of ['301', '-1', '1e3', '9999999999999999999', 'soon'])
      expect(() => cacheSeconds({ SECRETS_CACHE_SECONDS: bad })).toThrow(/SECRETS_CACHE_SECONDS/);
  });
});

describe('applySecrets', () => {
  it('reads each secret once however many variables it fills, and writes the values', async () => {
    const src = source({ 'svc/nats': JSON.stringify({ user: 'u', password: 'p', jwt: '' }), 'svc/tokens': '[1]' });
    const env: Record<string, string | undefined> = { NATS_JWT: 'stale' };
    const refs = secretRefs({
      NATS_USER_SECRET_ID: 'svc/nats#user',
      NATS_PASSWORD_SECRET_ID: 'svc/nats#password',
      NATS_JWT_SECRET_ID: 'svc/nats#jwt',
      NATS_NKEY_SEED_SECRET_ID: 'svc/nats#nkey_seed',
      AUTH_TOKENS_SECRET_ID: 'svc/tokens',
    });
    await expect(applySecrets(env, src, refs, 60)).resolves.toBe(true);
    expect(src.reads.sort()).toEqual(['svc/nats', 'svc/tokens']);
    // An empty field and an absent one read as unset: the domain's loader says whether that is allowed.
    expect(env).toEqual({ NATS_USER: 'u', NATS_PASSWORD: 'p', AUTH_TOKENS: '[1]' });
    await expect(applySecrets(env, src, refs, 60)).resolves.toBe(false);
  });

  it('reads a prototype-named field as data, and never pollutes Object.prototype', async () => {
    const src = source({ 'svc/x': '{"__proto__":"p","constructor":"c"}' });
    const env: Record<string, string | undefined> = {};
    await applySecrets(env, src, secretRefs({ A_SECRET_ID: 'svc/x#__proto__', B_SECRET_ID: 'svc/x#toString' }), 60);
    expect(env).toEqual({ A: 'p' });
    expect(({} as Record<string, unknown>).A).toBeUndefined();
  });

  it.each([
    ['not JSON', 'password=x', /is not a JSON object/],
    ['a JSON list', '["x"]', /is not a JSON object/],
    ['a number field', '{"password":12}', /field password is not a string/],
  ])('refuses %s by the secret id, never its text, and changes nothing', async (_what, text, message) => {
    const env: Record<string, string | undefined> = { SCAN_SMB_PASSWORD: 'kept' };
    const err = await applySecrets(
      env,
      source({ 'svc/smb': text }),
      secretRefs({ SCAN_SMB_PASSWORD_SECRET_ID: 'svc/smb#password' }),
      60,
    ).catch((e: Error) => e);
    expect(err).toBeInstanceOf(SecretReadError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).toContain('svc/smb');
    expect((err as Error).message).not.toContain(text);
    expect(env).toEqual({ SCAN_SMB_PASSWORD: 'kept' });
  });

  it('names the secret that cannot be read, and changes nothing', async () => {
    const env: Record<string, string | undefined> = { AUTH_TOKENS: 'kept' };
    const refs = secretRefs({ AUTH_TOKENS_SECRET_ID: 'svc/gone', SESSION_KEYS_SECRET_ID: 'svc/keys' });
    await expect(applySecrets(env, source({ 'svc/keys': 'k' }), refs, 60)).rejects.toThrow(
      /secret "svc\/gone" cannot be read: ResourceNotFoundException/,
    );
    expect(env).toEqual({ AUTH_TOKENS: 'kept' });
  });
});

describe('refreshSecrets', () => {
  it('moves the generation only when a value changed, so what was built from it is built again', async () => {
    const src = source({ 'svc/auth': '["grant-a"]' });
    const env: Record<string, string | undefined> = { AUTH_TOKENS_SECRET_ID: 'svc/auth' };
    let builds = 0;
    const grants = perEnvironment(() => {
      builds += 1;
      return JSON.parse(env.AUTH_TOKENS!) as string[];
    });

    await refreshSecrets(env, src);
    expect(grants()).toEqual(['grant-a']);
    const generation = environmentGeneration();
    await refreshSecrets(env, src);
    expect(environmentGeneration()).toBe(generation);
    expect(grants()).toEqual(['grant-a']);
    expect(builds).toBe(1);

    // The operator removes the grant from the secret: the next read after the cache sees it.
    src.texts['svc/auth'] = '[]';
    await refreshSecrets(env, src);
    expect(environmentGeneration()).toBe(generation + 1);
    expect(grants()).toEqual([]);
    expect(builds).toBe(2);
  });

  it('shares one read between concurrent invocations', async () => {
    const src = source({ 'svc/auth': '["g"]' });
    const env: Record<string, string | undefined> = { AUTH_TOKENS_SECRET_ID: 'svc/auth' };
    await Promise.all(Array.from({ length: 20 }, () => refreshSecrets(env, src)));
    expect(src.reads).toEqual(['svc/auth']);
  });

  it('reads nothing where no secret is named (the local stack)', async () => {
    const src = source({});
    await refreshSecrets({ AUTH_TOKENS: '[]' }, src);
    expect(src.reads).toEqual([]);
  });
});
