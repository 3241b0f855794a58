import { ConfigError } from '../../../lib/config/errors';
import { loadSyncConfig } from '../../../lib/sync/config';
import { HOUR_MS } from '../../../lib/sync/model';

const BASE = { TBANK_API_URL: 'http://127.0.0.1:1', SYNC_STEP_FUNCTION: 'svc-dev-syncStep' };

describe('SYNC_HOUR_MS: the length of the sync "hour"', () => {
  it('is an hour by default and may be shortened to a minute (soaks)', () => {
    expect(loadSyncConfig(BASE).hourMs).toBe(HOUR_MS);
    expect(loadSyncConfig({ ...BASE, SYNC_HOUR_MS: '60000' }).hourMs).toBe(60_000);
  });

  it.each(['59999', '0', '-5', '1.5', 'soon', String(24 * HOUR_MS + 1)])('refuses %s, naming it', (value) => {
    expect(() => loadSyncConfig({ ...BASE, SYNC_HOUR_MS: value })).toThrow(ConfigError);
    expect(() => loadSyncConfig({ ...BASE, SYNC_HOUR_MS: value })).toThrow(/SYNC_HOUR_MS/);
  });
});
