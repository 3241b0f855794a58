import { handler, PUBLIC_ROUTE } from '../../../functions/health/healthcheck';
import { COMPONENTS } from '../../../lib/health/check';
import { SERVICE_VERSION } from '../../../lib/version';

describe('GET /healthcheck (public, last known states)', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('answers 200 even when nothing can be probed: every component unknown, no detail, nothing thrown', async () => {
    // No table, bucket or NATS setting, and a secret reference that cannot be read: the refresh fails as a whole.
    for (const name of ['TABLE_DOWNLOADS', 'TABLE_SYNC', 'TABLE_SCAN', 'BUCKET_FILES', 'NATS_URL'])
      delete process.env[name];
    process.env.AUTH_TOKENS_SECRET_ID = 'svc/prod/no-such-secret';
    const answer = (await handler({ routeKey: PUBLIC_ROUTE }, {} as never)) as { statusCode: number; body: string };
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({
      status: 'unknown',
      version: SERVICE_VERSION,
      uptime_s: expect.any(Number),
      checks: Object.fromEntries(COMPONENTS.map((name) => [name, 'unknown'])),
      checked_s_ago: null,
    });
  });

  it('the deep check on any other route does read its configuration (and fails loudly without it)', async () => {
    for (const name of ['TABLE_DOWNLOADS', 'TABLE_SYNC', 'TABLE_SCAN', 'BUCKET_FILES']) delete process.env[name];
    delete process.env.AUTH_TOKENS_SECRET_ID;
    await expect(handler({ routeKey: 'GET /healthcheck/deep' }, {} as never)).rejects.toThrow(/TABLE_DOWNLOADS/);
  });
});
