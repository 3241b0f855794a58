import { randomBytes } from 'node:crypto';
import { grantJson, newToken, SCOPES } from '../../../lib/auth/tokens';
import { asyncHandler } from '../../../lib/lambda/async-handler';
import { createLogger, redactValue, runInvocation } from '../../../lib/log';
import { knownSecrets, REDACTED } from '../../../lib/log/redact';
import { emitMetric, metricsOutput } from '../../../lib/metrics';
import { newKeyringEntry } from '../../../lib/secrets/sealer';

/**
 * The never-log-a-secret guarantee under a planted-secret run: an API token,
 * a session key, a bot token, a torrent-client password, a NATS password and
 * a T-Bank token are planted where they can reach a line (environment,
 * request headers, error messages, stacks, cause chains, fields, metric
 * properties), and no line may print any of them. The stack's own version of
 * this run: test/e2e/observability.test.ts; the abuse suites check the logs
 * of a whole run for tokens and cookies.
 */

const planted = {
  apiToken: newToken(),
  sessionKey: newKeyringEntry('k1'),
  botToken: `7012345678:${randomBytes(26).toString('base64url')}`,
  torrentPassword: `qbt-${randomBytes(12).toString('base64url')}`,
  natsPassword: randomBytes(18).toString('base64url'),
  tbankToken: `t.${randomBytes(40).toString('base64url')}`,
};
const sessionKeyAlone = planted.sessionKey.slice(planted.sessionKey.indexOf(':') + 1);
const env = {
  SESSION_KEYS: `${planted.sessionKey},k0:${randomBytes(32).toString('base64')}`,
  TELEGRAM_BOT_TOKEN: planted.botToken,
  TORRENT_CLIENT_PASSWORD: planted.torrentPassword,
  NATS_PASSWORD: planted.natsPassword,
  AUTH_TOKENS: JSON.stringify([grantJson('planted-run', planted.apiToken, SCOPES)]),
};
const saved: Record<string, string | undefined> = {};

beforeAll(() => {
  for (const [name, value] of Object.entries(env)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterAll(() => {
  for (const [name, value] of Object.entries(saved))
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
});

/** Each planted value, and the forms it travels in: a keyring's key alone, URL-encoded. */
function forbidden(): string[] {
  const values = [...Object.values(planted), sessionKeyAlone];
  return [...values, ...values.map(encodeURIComponent)];
}

function expectClean(lines: string[]) {
  expect(lines.length).toBeGreaterThan(0);
  const text = lines.join('\n');
  for (const secret of forbidden()) expect([secret, text.includes(secret)]).toEqual([secret, false]);
}

function capture() {
  const lines: string[] = [];
  return { lines, log: createLogger({ domain: 'test' }, { write: (l) => lines.push(l) }) };
}

describe('no line prints a planted secret', () => {
  it('in messages, stacks and cause chains of errors, wherever the secret came from', async () => {
    const { lines, log } = capture();
    await runInvocation({ request_id: 'r1', cold_start: true }, async () => {
      // What the authorizer and a sync step register for their invocation.
      redactValue(planted.apiToken);
      redactValue(planted.tbankToken);
      const root = new Error(`401 for Authorization: Bearer ${planted.apiToken}`);
      const tbank = new Error(`T-Bank refused token ${planted.tbankToken}`, { cause: root });
      const telegram = new Error(`fetch https://api.telegram.org/bot${planted.botToken}/sendMessage failed`, {
        cause: tbank,
      });
      const nats = new Error(`nats://stack:${planted.natsPassword}@127.0.0.1:4222 refused`, { cause: telegram });
      const login = new Error(
        `POST /api/v2/auth/login username=admin&password=${encodeURIComponent(planted.torrentPassword)}`,
        {
          cause: nats,
        },
      );
      const keyring = new Error(`SESSION_KEYS entry k1 is ${sessionKeyAlone}`, { cause: login });
      log.error('everything_failed', { err: keyring, detail: `token ${planted.tbankToken}` });
      log.warn('fields_named_secret', {
        password: 'anything at all',
        token: planted.apiToken.slice(0, 10),
        authorization: 'Bearer whatever',
        bot_token: 'x',
      });
    });
    expectClean(lines);
    const first = JSON.parse(lines[0]);
    // The chain is all there, only the values are gone.
    expect(first.err.cause.cause.cause.cause.cause.message).toBe(`401 for Authorization: Bearer ${REDACTED}`);
    expect(first.err.stack).toContain(REDACTED);
    expect(JSON.parse(lines[1])).toMatchObject({
      password: REDACTED,
      token: REDACTED,
      authorization: REDACTED,
      bot_token: REDACTED,
    });
  });

  it('in the metric lines, whose properties pass the same redaction', () => {
    const lines: string[] = [];
    const write = metricsOutput.write;
    metricsOutput.write = (l) => lines.push(l);
    try {
      runInvocation({ request_id: 'r2', cold_start: false }, () => {
        redactValue(planted.tbankToken);
        emitMetric('TbankRateLimited', 1, {}, { note: `with ${planted.tbankToken}`, login: planted.torrentPassword });
      });
    } finally {
      metricsOutput.write = write;
    }
    expectClean(lines);
  });

  it('from the real authorizer and an async handler: a refused token, a failure carrying secrets', async () => {
    const lines: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const { handler: authorizer } = await import('../../../functions/auth/authorizer');
      for (const authorization of [`Bearer ${planted.apiToken}x`, `Bearer ${planted.apiToken} ${planted.apiToken}`])
        // Refused: API Gateway's 401 is the authorizer's throw.
        await expect(
          authorizer(
            {
              type: 'REQUEST',
              routeKey: 'GET /downloads',
              routeArn: 'arn:aws:execute-api:us-east-1:1:api/$default/GET/downloads',
              identitySource: [authorization],
              headers: { authorization },
            } as never,
            { awsRequestId: 'auth-1', functionName: 'authorizer' } as never,
          ),
        ).rejects.toThrow('Unauthorized');
      const failing = asyncHandler(createLogger({ domain: 'test' }), async () => {
        redactValue(planted.tbankToken);
        throw new Error('step failed', {
          cause: new Error(`upstream said: bad token ${planted.tbankToken}; bot ${planted.botToken}`),
        });
      });
      process.env.IS_OFFLINE = 'true';
      await failing({}, { awsRequestId: 'async-1', functionName: 'step' } as never);
    } finally {
      delete process.env.IS_OFFLINE;
      spy.mockRestore();
    }
    expect(lines.join('')).toContain('"event":"auth_refused"');
    expect(lines.join('')).toContain('"event":"async_handler_failed"');
    expect(lines.join('')).toContain('"AsyncHandlerFailures":1');
    expectClean(lines);
  });

  it('registered values belong to their invocation; the environment is read afresh', () => {
    runInvocation({ cold_start: false }, () => {
      redactValue(planted.tbankToken);
      expect(knownSecrets()).toContain(planted.tbankToken);
    });
    runInvocation({ cold_start: false }, () => expect(knownSecrets()).not.toContain(planted.tbankToken));
    const rotated = `qbt-${randomBytes(12).toString('base64url')}`;
    process.env.TORRENT_CLIENT_PASSWORD = rotated;
    try {
      expect(knownSecrets()).toContain(rotated);
    } finally {
      process.env.TORRENT_CLIENT_PASSWORD = planted.torrentPassword;
    }
  });
});
