import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { newId } from '../../lib/ident';
import { dueShardOf } from '../../lib/sync/keys';
import { syncServices } from '../support/sync';
import { ACCOUNTS, OPERATIONS } from '../../emulator/brokerage/dataset';
import { call } from '../support/http';
import { invokeScheduled, stackClients, stackConfig, stackSealer } from '../support/stack';

/** The hourly sync as deployed: the tick through offline's Lambda endpoint, steps invoked asynchronously, reads over HTTP. */
describe('hourly sync through serverless offline', () => {
  const tick = async () => expect((await invokeScheduled('syncTick')).FunctionError).toBeUndefined();

  it('a connection is synced: tick → async steps → GET /sync/{user}/hourly succeeded, operations readable', async () => {
    const user = newId();
    const saved = await call('POST', '/sync/connections', { user_id: user.toUpperCase(), token: 't.e2esecret99' });
    expect(saved.status).toBe(201);
    expect(saved.body).toEqual({ user_id: user, created_at: expect.any(String) });
    expect(JSON.stringify(saved.body)).not.toContain('e2esecret');

    await tick();
    let hourly = await call('GET', `/sync/${user}/hourly`);
    for (let i = 0; i < 300 && hourly.body?.state !== 'succeeded'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      hourly = await call('GET', `/sync/${user}/hourly`);
    }
    expect(hourly.body).toEqual({
      state: 'succeeded',
      meta: {
        attempt_id: expect.stringMatching(/^[0-9a-hjkmnp-tv-z]{26}$/),
        started_at: expect.any(String),
        finished_at: expect.any(String),
        error_code: null,
        sections: {
          portfolio: expect.objectContaining({ state: 'succeeded' }),
          operations: expect.objectContaining({ state: 'succeeded' }),
          'events.refresh': expect.objectContaining({ state: 'succeeded' }),
          'catalog.enrichment': expect.objectContaining({ state: 'succeeded' }),
        },
      },
    });

    const attempt = await call('GET', `/sync/attempts/${hourly.body.meta.attempt_id}`);
    expect(attempt.body.sections.map((s: { step: { state: string } }) => s.step.state)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    expect(JSON.stringify(attempt.body)).not.toContain('e2esecret');

    const ops = await call('GET', `/sync/${user}/operations?from=2026-11-01&to=2026-11-04`);
    const expected = OPERATIONS.filter(
      (o) => o.brokerAccountId !== ACCOUNTS[2].id && o.date >= '2026-11-01' && o.date < '2026-11-05',
    );
    expect(expected.length).toBeGreaterThan(5);
    expect(ops.body.items.map((o: { id: string }) => o.id).sort()).toEqual(expected.map((o) => o.id).sort());
    // Money is exact: a decimal string with its currency, never a float.
    for (const o of ops.body.items)
      if (o.payment)
        expect(o.payment).toEqual({
          currency: expect.stringMatching(/^[a-z]{3}$/),
          value: expect.stringMatching(/^-?\d+(\.\d{1,9})?$/),
        });
    expect((await call('GET', `/sync/${user}/operations?from=2026-11-05&to=2026-11-01`)).status).toBe(400);
  }, 90_000);

  it.each([
    ['GET', '/sync/123/hourly'],
    ['GET', '/sync/attempts/not-a-ulid'],
    ['GET', '/sync/01arz3ndektsv4rrffq69g5fau/operations'],
  ])('%s %s → 404 for a malformed id', async (method, path) => {
    const answer = await call(method, path);
    expect([answer.status, answer.body.error.code]).toEqual([404, 'NOT_FOUND']);
  });

  it('the shard tick takes one due shard, invoked as the tick fans out to it; a bad shard is refused, nothing fails', async () => {
    const lambda = new LambdaClient({ endpoint: process.env.TEST_LAMBDA_URL, region: 'us-east-1' });
    const invokeShard = async (payload: unknown) => {
      const out = await lambda.send(
        new InvokeCommand({
          FunctionName: 'torrent-scan-sync-test-syncTickShard',
          Payload: new TextEncoder().encode(JSON.stringify(payload)),
        }),
      );
      expect(out.FunctionError).toBeUndefined();
      return JSON.parse(new TextDecoder().decode(out.Payload)) as unknown;
    };
    try {
      const user = newId();
      expect((await call('POST', '/sync/connections', { user_id: user, token: 't.e2eshard' })).status).toBe(201);
      expect(await invokeShard({ shard: 16 })).toBe('rejected');
      for (const hostile of [{ shard: '0' }, { shard: -1 }, { shard: 1.5 }, null, 'x', { shard: { $gt: 0 } }])
        expect(await invokeShard(hostile)).toBe('rejected');
      expect(await invokeShard({ shard: dueShardOf(user) })).toMatchObject({ first: expect.any(Number) });
      let hourly = await call('GET', `/sync/${user}/hourly`);
      for (let i = 0; i < 300 && hourly.body?.state !== 'succeeded'; i++) {
        await new Promise((r) => setTimeout(r, 200));
        hourly = await call('GET', `/sync/${user}/hourly`);
      }
      expect(hourly.body.state).toBe('succeeded');
    } finally {
      lambda.destroy();
    }
  });

  it('DELETE /sync/connections/{user}: the connection, its head and its synced data go; again → 404', async () => {
    const user = newId();
    expect((await call('POST', '/sync/connections', { user_id: user, token: 't.e2edelete' })).status).toBe(201);
    await tick();
    // Settled first: with an attempt running the answer is 202, call again after its steps' bound (30 s).
    let hourly = await call('GET', `/sync/${user}/hourly`);
    for (let i = 0; i < 300 && hourly.body?.state === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      hourly = await call('GET', `/sync/${user}/hourly`);
    }
    expect(hourly.status).toBe(200);
    expect((await call('GET', `/sync/${user}/operations`)).body.items.length).toBeGreaterThan(0);
    expect((await call('DELETE', `/sync/connections/${user}`)).status).toBe(204);
    expect((await call('GET', `/sync/${user}/hourly`)).status).toBe(404);
    // The synced data went with it (lib/sync/dynamodb-purge.ts).
    expect((await call('GET', `/sync/${user}/operations`)).body.items).toEqual([]);
    expect((await call('DELETE', `/sync/connections/${user}`)).body.error.code).toBe('NOT_FOUND');
    expect((await call('DELETE', '/sync/connections/not-a-ulid')).status).toBe(404);
  });

  it('refuses bad connections with a clear 400 and stores nothing', async () => {
    const aws = stackClients();
    const { connections } = syncServices({
      documents: aws.documents,
      table: stackConfig().tables.sync,
      waitBoundMs: 1,
      sealer: stackSealer(),
    });
    for (const body of [
      { user_id: 'x'.repeat(26), token: 'tok_x' },
      { user_id: newId() },
      { user_id: newId(), token: 'tok_x', admin: true },
    ]) {
      const answer = await call('POST', '/sync/connections', body);
      expect([answer.status, answer.body.error.code]).toEqual([400, 'INVALID_REQUEST']);
      if (/^[0-9a-z]{26}$/.test(body.user_id)) expect(await connections.connectionToken(body.user_id)).toBeUndefined();
    }
    aws.dynamodb.destroy();
    expect((await call('GET', `/sync/${newId()}/operations?from=yesterday`)).status).toBe(400);
    expect((await call('GET', `/sync/${newId()}/hourly`)).status).toBe(404);
  });
});
