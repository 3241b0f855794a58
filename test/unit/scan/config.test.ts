import { loadScanConfig } from '../../../lib/scan/config';

describe('loadScanConfig', () => {
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

  it("answers as the contract's slice 0 by default: the null normaliser (NOT_IMPLEMENTED); content-ai on request", () => {
    expect(loadScanConfig({ SCAN_HOTFOLDER_ROOT: '/x' }).normalizer).toBe('null');
    expect(loadScanConfig({ SCAN_HOTFOLDER_ROOT: '/x', SCAN_NORMALIZER: 'content-ai' }).normalizer).toBe('content-ai');
  });

  it("takes the contract's SCAN_HOTFOLDER_MODE and SCAN_HOTFOLDER_PATH, the older names as aliases", () => {
    const hot = (env: Record<string, string>) => loadScanConfig(env).hotFolder;
    expect(hot({ SCAN_HOTFOLDER_MODE: 'local', SCAN_HOTFOLDER_PATH: '/srv/hot' })).toEqual({
      kind: 'local',
      root: '/srv/hot',
    });
    expect(hot({ SCAN_HOTFOLDER_PATH: '/srv/hot' })).toEqual({ kind: 'local', root: '/srv/hot' });
    expect(hot({ SCAN_HOTFOLDER_MODE: 'smb', SCAN_HOTFOLDER_PATH: '//h/s/in', SCAN_SMB_USER: 'u' })).toEqual({
      kind: 'smb',
      host: 'h',
      port: 445,
      share: 's',
      dir: 'in',
      user: 'u',
      password: '',
    });
    expect(hot({ SCAN_HOTFOLDER_PATH: '\\\\h\\s' })).toMatchObject({ kind: 'smb', host: 'h', share: 's' });
    expect(hot({ SCAN_HOTFOLDER_MODE: 'smb', SCAN_SMB_SHARE: '//h/s' })).toMatchObject({ kind: 'smb', share: 's' });
    expect(hot({ SCAN_HOTFOLDER_PATH: '/srv/hot', SCAN_HOTFOLDER_ROOT: '/srv/hot' })).toEqual({
      kind: 'local',
      root: '/srv/hot',
    });
  });

  it.each([
    [{ SCAN_HOTFOLDER_MODE: 'ftp', SCAN_HOTFOLDER_PATH: '/x' }, /SCAN_HOTFOLDER_MODE/],
    [{ SCAN_HOTFOLDER_MODE: 'local', SCAN_HOTFOLDER_PATH: '//h/s' }, /SCAN_HOTFOLDER_PATH/],
    [{ SCAN_HOTFOLDER_MODE: 'smb', SCAN_HOTFOLDER_PATH: '/srv/hot' }, /SCAN_HOTFOLDER_PATH/],
    [{ SCAN_HOTFOLDER_MODE: 'smb' }, /SCAN_SMB_SHARE/],
    [{ SCAN_HOTFOLDER_MODE: 'local', SCAN_HOTFOLDER_PATH: '/x', SCAN_SMB_SHARE: '//h/s' }, /SCAN_SMB_SHARE/],
    [{ SCAN_HOTFOLDER_MODE: 'smb', SCAN_HOTFOLDER_PATH: '//h/s', SCAN_HOTFOLDER_ROOT: '/x' }, /SCAN_HOTFOLDER_ROOT/],
    [{ SCAN_HOTFOLDER_PATH: '/a', SCAN_HOTFOLDER_ROOT: '/b' }, /SCAN_HOTFOLDER_ROOT differs/],
  ])('refuses %j', (env, message) => {
    expect(() => loadScanConfig(env as Record<string, string>)).toThrow(message);
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
      /SCAN_SMB_USER is set without an SMB hot folder/,
    );
    expect(() => loadScanConfig({ SCAN_SMB_SHARE: '//h/s', SCAN_SMB_PASSWORD: 'p' })).toThrow(/SCAN_SMB_USER/);
    for (const bad of ['//h/s/../x', '//h/s/./x', '//h', '//h/', 'h/s', '//h/s//x', '//h/s/a:b'])
      expect(() => loadScanConfig({ SCAN_SMB_SHARE: bad })).toThrow(/SCAN_SMB_SHARE/);
    expect(() => loadScanConfig({ SCAN_HOTFOLDER_ROOT: 'relative/path' })).toThrow(/SCAN_HOTFOLDER_ROOT/);
    expect(() => loadScanConfig({ SCAN_HOTFOLDER_ROOT: '/x', SCAN_INPUT_DIR: '../up' })).toThrow(/SCAN_INPUT_DIR/);
  });
});
