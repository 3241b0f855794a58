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

describe('loadScanConfig', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { loadScanConfig } = require('../../../lib/config') as typeof import('../../../lib/config');

  it('a local folder by default, with the design defaults', () => {
    expect(loadScanConfig({ SCAN_HOTFOLDER_ROOT: '/srv/hot' })).toMatchObject({
      hotFolder: { kind: 'local', root: '/srv/hot' },
      maxInflight: 4,
      settleMs: 2000,
      timeoutMs: 300_000,
      pollEveryMs: 5000,
      publishRetries: 3,
      resultSubject: 'scan.results',
      dirs: { input: 'Input', output: 'Output', tmp: 'Tmp' },
    });
  });

  it('timing settings accept fractional seconds, and refuse what is not a duration', () => {
    expect(
      loadScanConfig({
        SCAN_HOTFOLDER_ROOT: '/x',
        SCAN_POLL_SECONDS: '0.25',
        SCAN_SETTLE_SECONDS: '1.5',
        SCAN_TIMEOUT_SECONDS: '90.125',
      }),
    ).toMatchObject({
      pollEveryMs: 250,
      settleMs: 1500,
      timeoutMs: 90_125,
    });
    for (const bad of ['1e3', '-1', 'soon', '0.0001', '.5'])
      expect(() => loadScanConfig({ SCAN_HOTFOLDER_ROOT: '/x', SCAN_POLL_SECONDS: bad })).toThrow(/SCAN_POLL_SECONDS/);
  });

  it('an SMB share when all SCAN_SMB_ variables are set', () => {
    expect(
      loadScanConfig({ SCAN_SMB_SHARE: '//files.local/scan', SCAN_SMB_USER: 'u', SCAN_SMB_PASSWORD: 'p' }).hotFolder,
    ).toEqual({
      kind: 'smb',
      host: 'files.local',
      port: 445,
      share: 'scan',
      user: 'u',
      password: 'p',
    });
  });

  it('rule 30: a folder inside the share, the UNC form, a guest share (no login)', () => {
    const smb = (env: Record<string, string>) => loadScanConfig(env).hotFolder;
    expect(smb({ SCAN_SMB_SHARE: '//files.local/scan/dept/in', SCAN_SMB_USER: 'u', SCAN_SMB_PASSWORD: 'p' })).toEqual({
      kind: 'smb',
      host: 'files.local',
      port: 445,
      share: 'scan',
      dir: 'dept/in',
      user: 'u',
      password: 'p',
    });
    expect(smb({ SCAN_SMB_SHARE: '\\\\files.local\\scan\\dept\\', SCAN_SMB_USER: 'u' })).toMatchObject({
      share: 'scan',
      dir: 'dept',
      user: 'u',
      password: '',
    });
    expect(smb({ SCAN_SMB_SHARE: '//h/s' })).toEqual({ kind: 'smb', host: 'h', port: 445, share: 's' });
  });

  it('refuses an SMB login without a share, a password without a user, a folder part that climbs', () => {
    expect(() => loadScanConfig({ SCAN_SMB_USER: 'u', SCAN_SMB_PASSWORD: 'p', SCAN_HOTFOLDER_ROOT: '/x' })).toThrow(
      /SCAN_SMB_USER is set without SCAN_SMB_SHARE/,
    );
    expect(() => loadScanConfig({ SCAN_SMB_SHARE: '//h/s', SCAN_SMB_PASSWORD: 'p' })).toThrow(/SCAN_SMB_USER/);
    for (const bad of ['//h/s/../x', '//h/s/./x', '//h', '//h/', 'h/s', '//h/s//x', '//h/s/a:b'])
      expect(() => loadScanConfig({ SCAN_SMB_SHARE: bad })).toThrow(/SCAN_SMB_SHARE/);
    expect(() => loadScanConfig({ SCAN_HOTFOLDER_ROOT: 'relative/path' })).toThrow(/SCAN_HOTFOLDER_ROOT/);
    expect(() => loadScanConfig({ SCAN_HOTFOLDER_ROOT: '/x', SCAN_INPUT_DIR: '../up' })).toThrow(/SCAN_INPUT_DIR/);
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
