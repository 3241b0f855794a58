import { SERVICE_VERSION } from '../../lib/version';
import { NatsConnection } from 'nats';
import { bearer } from '../support/http';
import { httpUrl, stackNats } from '../support/stack';

/** Through `serverless offline` exactly as a client would: HTTP port and NATS subjects. */
describe('the service under serverless offline', () => {
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await stackNats();
  });
  afterAll(() => nc.close());

  it("GET /healthcheck is public: each component's last known state, no detail, no token", async () => {
    // The first answer may come before the container's first refresh landed (unknown): ask until it has.
    let body: Record<string, unknown> = {};
    for (let i = 0; i < 30 && body.checked_s_ago == null; i += 1) {
      const res = await fetch(httpUrl('/healthcheck'));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('application/json');
      body = await res.json();
      if (body.checked_s_ago == null) await new Promise((r) => setTimeout(r, 500));
    }
    expect(body).toEqual({
      status: 'ok',
      version: SERVICE_VERSION,
      uptime_s: expect.any(Number),
      checks: { dynamodb: 'ok', s3: 'ok', nats: 'ok', hotfolder: 'ok', torrent_client: 'ok' },
      checked_s_ago: expect.any(Number),
    });
  });

  it('GET /healthcheck/deep needs a token with health:read, and answers every check ok', async () => {
    expect((await fetch(httpUrl('/healthcheck/deep'))).status).toBe(401);
    const refused = await fetch(httpUrl('/healthcheck/deep'), {
      headers: bearer(process.env.TEST_TOKEN_DOWNLOADS_READ),
    });
    expect(refused.status).toBe(403);
    const res = await fetch(httpUrl('/healthcheck/deep'), { headers: bearer() });
    expect(res.status).toBe(200);
    // What wakes the scan poller appears once a poller ran (test/e2e/scan-nats.test.ts checks it), the disk once a
    // downloads poll saw the client's figures (test/integration/healthcheck.test.ts).
    const { hotfolder_wake: _wake, disk_space: disk, ...deep } = await res.json();
    expect(deep).toEqual({
      status: 'ok',
      version: SERVICE_VERSION,
      uptime_s: expect.any(Number),
      checks: {
        dynamodb: 'ok',
        s3: 'ok',
        nats: 'ok',
        hotfolder: 'ok',
        torrent_client: 'ok',
        ...(disk ? { disk: 'ok' } : {}),
      },
    });
  });

  it('invokes a NATS-triggered function for a message on its subject (health.ping → reply)', async () => {
    const payload = `ping-${Date.now()}`;
    const reply = await nc.request('health.ping', payload, { timeout: 10_000 });
    expect(JSON.parse(new TextDecoder().decode(reply.data))).toEqual({
      status: 'ok',
      version: SERVICE_VERSION,
      subject: 'health.ping',
      echo: payload,
      node: process.version, // local is Lambda: the functions run on the tests' (pinned) Node.js
    });
  });

  it('answers 404 for an unknown route', async () => {
    expect((await fetch(httpUrl('/no-such-route'))).status).toBe(404);
  });
});
