import { createLogger } from '../../../lib/log';
import { audit, AUDIT_EVENTS, telegramPrincipal } from '../../../lib/log/audit';

describe('audit lines', () => {
  const lines: string[] = [];
  const log = createLogger({ function: 'syncConnections' }, { write: (l) => lines.push(l), now: () => 0 });
  beforeEach(() => (lines.length = 0));

  it('carry the stable event, who, through what, and audit: true', () => {
    audit(log, AUDIT_EVENTS.connectionSaved, { principal: 'ops', via: 'api' }, { user_id: 'u1' });
    expect(JSON.parse(lines[0])).toEqual({
      level: 'info',
      time: '1970-01-01T00:00:00.000Z',
      event: 'sync_connection_saved',
      function: 'syncConnections',
      user_id: 'u1',
      principal: 'ops',
      via: 'api',
      audit: true,
    });
  });

  it('name an unresolved principal rather than drop the line, and a Telegram user by id', () => {
    audit(log, AUDIT_EVENTS.downloadCancelled, { principal: '', via: 'web' });
    audit(log, AUDIT_EVENTS.downloadCancelled, { principal: telegramPrincipal(4242), via: 'telegram' });
    expect(lines.map((l) => JSON.parse(l).principal)).toEqual(['unknown', 'telegram:4242']);
    expect(telegramPrincipal(undefined)).toBe('telegram:unknown');
    expect(Object.values(AUDIT_EVENTS)).toEqual([
      'sync_connection_saved',
      'sync_connection_removed',
      'download_cancelled',
      'failure_retry',
    ]);
  });
});
