import fs from 'node:fs';
import path from 'node:path';
import { newId } from '../../../lib/ident';
import { handler as actionsHandler } from '../../../functions/web/actions';
import { handler as retryHandler } from '../../../functions/web/console-retry';
import { v1 } from '../../support/downloads';
import { call } from '../../support/http';
import { ALLOWED_USER, chats, press } from '../../support/telegram';
import { invokePage, SessionContext } from '../../support/web';

/**
 * Sensitive writes log who made them (lib/log/audit.ts): read from the log
 * lines themselves, through each surface: the JSON API behind the real
 * authorizer (serverless offline's log), the bot's button (the emulator
 * presses it; offline's log), the UI's and console's forms (the deployed
 * handlers in-process, as after the session authorizer: this process's stdout).
 */

const offlineLog = path.join(process.env.TEST_STATE_DIR!, 'logs', 'serverless-offline.log');
type Line = Record<string, unknown>;

function jsonLines(text: string): Line[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Line];
      } catch {
        return [];
      }
    });
}

/** The one line of `event` about `field = value` in offline's log, waited for. */
async function offlineLine(event: string, field: string, value: unknown): Promise<Line[]> {
  const until = Date.now() + 15_000;
  for (;;) {
    const found = jsonLines(fs.readFileSync(offlineLog, 'utf8')).filter((l) => l.event === event && l[field] === value);
    if (found.length > 0 || Date.now() > until) return found;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Lines this process writes to stdout while `run` runs (the in-process handlers' logger). */
async function stdoutLines(run: () => Promise<unknown>): Promise<Line[]> {
  const written: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return jsonLines(written.join(''));
}

async function newDownload(): Promise<string> {
  const created = await call('POST', '/downloads', { infohashes: [v1().infohash], name: 'audit drill' });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

const session: SessionContext = {
  principal: 'audit-operator',
  scopes: 'downloads:read downloads:write',
  csrf: 'c'.repeat(24),
};

describe('sensitive writes log the principal', () => {
  it('a connection saved (new or its token replaced) and removed: the API token that did it', async () => {
    const user = newId();
    expect((await call('POST', '/sync/connections', { user_id: user, token: 't.auditsecret1' })).status).toBe(201);
    expect((await call('POST', '/sync/connections', { user_id: user, token: 't.auditsecret2' })).status).toBe(201);
    const saved = await offlineLine('sync_connection_saved', 'user_id', user);
    expect(saved).toHaveLength(2);
    for (const line of saved) expect(line).toMatchObject({ principal: 'test-all', via: 'api', audit: true });
    expect(JSON.stringify(saved)).not.toContain('auditsecret');

    expect((await call('DELETE', `/sync/connections/${user}`)).status).toBe(204);
    expect(await offlineLine('sync_connection_removed', 'user_id', user)).toEqual([
      expect.objectContaining({ principal: 'test-all', via: 'api', audit: true }),
    ]);
  });

  it('a download cancelled through the API, the UI and the bot: the token, the session, the Telegram user', async () => {
    const viaApi = await newDownload();
    expect((await call('POST', `/downloads/${viaApi}/state`, { state: 'cancelled' })).status).toBe(200);
    expect(await offlineLine('download_cancelled', 'download_id', viaApi)).toEqual([
      expect.objectContaining({ principal: 'test-all', via: 'api', audit: true }),
    ]);

    const viaWeb = await newDownload();
    const web = await stdoutLines(async () => {
      const page = await invokePage(actionsHandler, session, {
        method: 'POST',
        routeKey: 'POST /download/{id}/cancel',
        params: { id: viaWeb },
        body: `csrf=${session.csrf}`,
      });
      expect(page.statusCode).toBe(303);
    });
    expect(web.filter((l) => l.event === 'download_cancelled')).toEqual([
      expect.objectContaining({ download_id: viaWeb, principal: 'audit-operator', via: 'web', audit: true }),
    ]);

    const viaBot = await newDownload();
    const pressed = await press(chats()[0], ALLOWED_USER(), `v1:c:${viaBot}`);
    expect(pressed.status).toBe(200);
    expect(await offlineLine('download_cancelled', 'download_id', viaBot)).toEqual([
      expect.objectContaining({ principal: `telegram:${ALLOWED_USER()}`, via: 'telegram', audit: true }),
    ]);
    expect((await call('GET', `/downloads/${viaBot}`)).body.state).toBe('cancelled');
  });

  it("a console retry, whatever came of it: the session's principal and the outcome", async () => {
    const id = newId();
    const lines = await stdoutLines(async () => {
      const page = await invokePage(retryHandler, session, {
        method: 'POST',
        routeKey: 'POST /failures/{id}/retry',
        params: { id },
        body: `csrf=${session.csrf}`,
      });
      expect(page.statusCode).toBe(404);
    });
    expect(lines.filter((l) => l.event === 'failure_retry')).toEqual([
      expect.objectContaining({
        failure_id: id,
        outcome: 'missing',
        principal: 'audit-operator',
        via: 'console',
        audit: true,
      }),
    ]);
  });
});
