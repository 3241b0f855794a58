import type { Context } from 'aws-lambda';
import { handler } from '../../../functions/health/natsPing';
import { isInboxSubject } from '../../../lib/nats/inbox';

/**
 * `health.ping` answers only on inbox subjects (issue 41): its answer echoes
 * up to 1 KB of the sender's data, and a sender that named `scan.results` as
 * its reply would otherwise have us publish that data there.
 */
const mockPublished: Array<{ subject: string; data: string }> = [];
let mockInboxPrefix: string | undefined;

jest.mock('../../../lib/nats/connection', () => ({
  natsConnection: async () => ({
    publish: (subject: string, data: string) => mockPublished.push({ subject, data }),
    flush: async () => undefined,
  }),
}));
jest.mock('../../../lib/config', () => ({
  config: () => ({ nats: { servers: ['nats://127.0.0.1:1'], auth: { kind: 'none' }, inboxPrefix: mockInboxPrefix } }),
}));

const ping = (reply: string) =>
  handler({ source: 'nats', subject: 'health.ping', reply, headers: {}, data: '{"job_id":"forged"}' }, {} as Context);

beforeEach(() => {
  mockPublished.length = 0;
  mockInboxPrefix = undefined;
});

describe('natsPing', () => {
  it.each(['_INBOX.abc123', '_INBOX.Xk2Lz.17', '_INBOX.a-b_c'])('answers on the inbox %s', async (reply) => {
    await ping(reply);
    expect(mockPublished.map((p) => p.subject)).toEqual([reply]);
  });

  it.each([
    'scan.results',
    'scan.request',
    'health.ping',
    '_INBOX',
    '_INBOX.',
    '_INBOX.>',
    '_INBOX.*',
    '_INBOX..x',
    '_INBOXES.x',
    'x._INBOX.y',
    '_inbox.abc',
    `_INBOX.${'a'.repeat(300)}`,
  ])('publishes nothing on %s', async (reply) => {
    await ping(reply);
    expect(mockPublished).toEqual([]);
  });

  it('answers on the configured inbox prefix too', async () => {
    mockInboxPrefix = 'tenant_a.inbox';
    await ping('tenant_a.inbox.r1');
    await ping('tenant_a.other.r1');
    await ping('_INBOX.r2');
    expect(mockPublished.map((p) => p.subject)).toEqual(['tenant_a.inbox.r1', '_INBOX.r2']);
  });

  it('isInboxSubject needs a token after the prefix', () => {
    expect(isInboxSubject('_INBOX.x')).toBe(true);
    expect(isInboxSubject('tenant.x', 'tenant')).toBe(true);
    expect(isInboxSubject('tenant', 'tenant')).toBe(false);
  });
});
