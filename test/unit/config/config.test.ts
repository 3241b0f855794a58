import { ConfigError, loadConfig } from '../../../lib/config';

const valid = {
  TABLE_DOWNLOADS: 'svc-dev-downloads',
  TABLE_SYNC: 'svc-dev-sync',
  TABLE_SCAN: 'svc-dev-scan',
  BUCKET_FILES: 'svc-dev-files',
  NATS_URL: 'nats://127.0.0.1:4222',
};

function problems(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('loadConfig accepted an invalid environment');
}

describe('loadConfig', () => {
  it('reads a valid environment with defaults', () => {
    const cfg = loadConfig(valid);
    expect(cfg).toMatchObject({
      stage: 'dev',
      region: 'us-east-1',
      tables: { downloads: 'svc-dev-downloads', sync: 'svc-dev-sync', scan: 'svc-dev-scan' },
      buckets: { files: 'svc-dev-files' },
      nats: { servers: ['nats://127.0.0.1:4222'] },
      health: { probeTimeoutMs: 2000 },
      endpoints: { dynamodb: undefined, s3: undefined },
    });
  });

  it('takes an inbox prefix of plain subject tokens, and refuses wildcards', () => {
    expect(loadConfig({ ...valid, NATS_INBOX_PREFIX: '_INBOX_scan.a' }).nats.inboxPrefix).toBe('_INBOX_scan.a');
    expect(loadConfig(valid).nats.inboxPrefix).toBeUndefined();
    expect(problems({ ...valid, NATS_INBOX_PREFIX: 'scan.>' }).join('\n')).toMatch(/NATS_INBOX_PREFIX/);
  });

  it('takes the SDK endpoint variables and a NATS server list', () => {
    const cfg = loadConfig({
      ...valid,
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000',
      AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:4569',
      NATS_URL: 'nats://a:4222, nats://b:4222',
    });
    expect(cfg.endpoints).toEqual({ dynamodb: 'http://127.0.0.1:8000', s3: 'http://127.0.0.1:4569' });
    expect(cfg.nats.servers).toEqual(['nats://a:4222', 'nats://b:4222']);
  });

  it.each([
    ['TABLE_DOWNLOADS', { TABLE_DOWNLOADS: undefined }, 'is required'],
    ['TABLE_DOWNLOADS', { TABLE_DOWNLOADS: '   ' }, 'is required'],
    ['BUCKET_FILES', { BUCKET_FILES: 'Upper_Case' }, 'must match an S3 bucket name'],
    ['NATS_URL', { NATS_URL: 'http://127.0.0.1:4222' }, 'must use nats or tls'],
    ['NATS_URL', { NATS_URL: 'not a url' }, 'must be a URL'],
    ['AWS_ENDPOINT_URL_S3', { AWS_ENDPOINT_URL_S3: 'ftp://x' }, 'must use http or https'],
    ['AWS_REGION', { AWS_REGION: 'mars' }, 'must match an AWS region'],
    ['HEALTH_PROBE_TIMEOUT_MS', { HEALTH_PROBE_TIMEOUT_MS: '2s' }, 'must be an integer'],
    ['HEALTH_PROBE_TIMEOUT_MS', { HEALTH_PROBE_TIMEOUT_MS: '99999999' }, 'must be between 100 and 10000'],
    ['STAGE', { STAGE: 'Prod!' }, 'must match lowercase letters'],
  ])('fails fast naming %s', (name, override, message) => {
    const found = problems({ ...valid, ...override });
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(name);
    expect(found[0]).toContain(message);
  });

  it('lists every bad variable in one error', () => {
    const found = problems({ NATS_URL: 'x', HEALTH_PROBE_TIMEOUT_MS: 'y' });
    expect(found.map((p) => p.split(' ')[0]).sort()).toEqual(
      ['BUCKET_FILES', 'HEALTH_PROBE_TIMEOUT_MS', 'NATS_URL', 'TABLE_DOWNLOADS', 'TABLE_SCAN', 'TABLE_SYNC'].sort(),
    );
  });
});

describe('NATS credentials', () => {
  const seed = 'SUAM' + 'A'.repeat(54);
  const jwt = 'eyJhbGciOiJlZDI1NTE5In0.eyJzdWIiOiJVIn0.c2ln';

  it.each([
    ['nothing', {}, { kind: 'none' }],
    ['user and password', { NATS_USER: 'svc', NATS_PASSWORD: 'pw' }, { kind: 'user', user: 'svc', password: 'pw' }],
    ['an nkey seed', { NATS_NKEY_SEED: seed }, { kind: 'nkey', seed }],
    ['a seed and a JWT', { NATS_NKEY_SEED: seed, NATS_JWT: jwt }, { kind: 'jwt', jwt, seed }],
  ])('accepts %s', (_label, creds, auth) => {
    expect(loadConfig({ ...valid, ...creds }).nats.auth).toEqual(auth);
  });

  it.each([
    ['a user without password', { NATS_USER: 'svc' }, 'NATS_PASSWORD is required'],
    ['a password without user', { NATS_PASSWORD: 'pw' }, 'NATS_USER is required'],
    ['a JWT without its seed', { NATS_JWT: jwt }, 'NATS_NKEY_SEED is required'],
    ['both kinds at once', { NATS_USER: 'svc', NATS_PASSWORD: 'pw', NATS_NKEY_SEED: seed }, 'not both'],
    ['a seed that is not a user seed', { NATS_NKEY_SEED: 'SOAM' + 'A'.repeat(54) }, 'user nkey seed'],
    ['a malformed JWT', { NATS_NKEY_SEED: seed, NATS_JWT: 'not-a-jwt' }, 'user JWT'],
  ])('refuses %s at startup, naming the variable', (_label, creds, message) => {
    const found = problems({ ...valid, ...creds });
    expect(found.join('; ')).toContain(message);
  });

  it('never echoes a secret in the error', () => {
    const leaked = 'SOAMSECRETSECRETSECRETSECRETSECRETSECRETSECRETSECRETSECRE';
    expect(problems({ ...valid, NATS_NKEY_SEED: leaked, NATS_JWT: 'secret-jwt-text' }).join('; ')).not.toMatch(
      /SECRETSECRET|secret-jwt-text/,
    );
  });
});
