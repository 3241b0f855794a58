import { ConfigError } from '../../../lib/config';
import { loadTorrentClientConfig, torrentClientConfigured } from '../../../lib/torrents/config';

describe('loadTorrentClientConfig', () => {
  const base = { TORRENT_CLIENT_URL: 'http://nas:8080' };

  it('password login by default, with the documented defaults', () => {
    expect(loadTorrentClientConfig({ ...base, TORRENT_CLIENT_PASSWORD: 'pw' })).toEqual({
      url: 'http://nas:8080',
      auth: { kind: 'password', username: 'admin', password: 'pw' },
      timeoutMs: 5000,
      category: 'torrent-scan-sync',
      adoptAllCategories: false,
      cancelAction: 'remove',
      cancelDeleteFiles: false,
      missingGraceMs: 600_000,
      fullResyncMs: 600_000,
    });
  });

  it('an API key instead; both at once is refused by name', () => {
    expect(loadTorrentClientConfig({ ...base, TORRENT_CLIENT_API_KEY: 'qbt_abcdefgh1234' }).auth).toEqual({
      kind: 'apiKey',
      key: 'qbt_abcdefgh1234',
    });
    expect(() =>
      loadTorrentClientConfig({ ...base, TORRENT_CLIENT_API_KEY: 'qbt_abcdefgh1234', TORRENT_CLIENT_PASSWORD: 'pw' }),
    ).toThrow(/not both/);
  });

  it('names every bad setting, never echoing the key', () => {
    let err: unknown;
    try {
      loadTorrentClientConfig({
        ...base,
        TORRENT_CLIENT_API_KEY: 'secret-not-a-key',
        TORRENT_CANCEL_ACTION: 'explode',
        TORRENT_CLIENT_CATEGORY: '../x',
        TORRENT_ADOPT_ALL_CATEGORIES: 'yes',
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    for (const name of [
      'TORRENT_CLIENT_API_KEY',
      'TORRENT_CANCEL_ACTION',
      'TORRENT_CLIENT_CATEGORY',
      'TORRENT_ADOPT_ALL_CATEGORIES',
    ])
      expect(message).toContain(name);
    expect(message).not.toContain('secret-not-a-key');
  });

  it('npm start uses your own client only when URL and a credential are set', () => {
    expect(torrentClientConfigured({ ...base })).toBe(false);
    expect(torrentClientConfigured({ ...base, TORRENT_CLIENT_PASSWORD: 'pw' })).toBe(true);
  });
});
