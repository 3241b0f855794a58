import { handler, LIVENESS_ROUTE } from '../../../functions/health/healthcheck';
import { SERVICE_VERSION } from '../../../lib/version';

describe('GET /healthcheck (public liveness)', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('answers from the function alone: no configuration loaded, no dependency asked, no secret read', async () => {
    // No table, bucket or NATS setting, and a secret reference that cannot be read: any of them would fail the deep check.
    for (const name of ['TABLE_DOWNLOADS', 'TABLE_SYNC', 'TABLE_SCAN', 'BUCKET_FILES', 'NATS_URL'])
      delete process.env[name];
    process.env.AUTH_TOKENS_SECRET_ID = 'svc/prod/no-such-secret';
    const answer = (await handler({ routeKey: LIVENESS_ROUTE }, {} as never)) as { statusCode: number; body: string };
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ status: 'ok', version: SERVICE_VERSION, uptime_s: expect.any(Number) });
  });

  it('the deep check on any other route does read its configuration (and fails loudly without it)', async () => {
    for (const name of ['TABLE_DOWNLOADS', 'TABLE_SYNC', 'TABLE_SCAN', 'BUCKET_FILES']) delete process.env[name];
    delete process.env.AUTH_TOKENS_SECRET_ID;
    await expect(handler({ routeKey: 'GET /healthcheck/deep' }, {} as never)).rejects.toThrow(/TABLE_DOWNLOADS/);
  });
});
