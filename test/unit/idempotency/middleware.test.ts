import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { httpHandler } from '../../../lib/http/handler';
import { json } from '../../../lib/http/response';
import { idempotency } from '../../../lib/idempotency/middleware';
import { REPLAYED_HEADER } from '../../../lib/idempotency/service';
import { createLogger } from '../../../lib/log';
import { MemoryStore } from './memory-store';

/** The middleware in the real handler chain (httpErrors, requireAuthorizer, idempotency) over an in-memory store. */
const log = createLogger({}, { write: () => undefined });
const context = { awsRequestId: 'r-1' } as Context;

function event(body: string, headers: Record<string, string> = { 'idempotency-key': 'k-1' }, principal = 'ops') {
  return {
    routeKey: 'POST /things',
    rawPath: '/things',
    headers,
    body,
    isBase64Encoded: false,
    requestContext: { http: { method: 'POST' }, authorizer: { lambda: { principal } } },
  } as unknown as APIGatewayProxyEventV2;
}

function build(store: MemoryStore, core: (body: unknown) => Promise<number>) {
  const parse = (e: APIGatewayProxyEventV2) => {
    const body = JSON.parse(e.body ?? 'null') as { n?: unknown };
    if (typeof body?.n !== 'number') throw Object.assign(new Error('n must be a number'), { name: 'Bad' });
    return body;
  };
  return httpHandler(log, async (e) => json(201, { ran: await core(parse(e)) }), {
    use: [idempotency({ route: 'POST /things', deps: () => ({ store, log }), payload: parse })],
  });
}

describe('idempotency middleware', () => {
  it('runs the core once; a retry gets the stored HTTP result, marked replayed', async () => {
    const store = new MemoryStore();
    let runs = 0;
    const handler = build(store, async () => ++runs);
    const first = await handler(event('{"n":1}'), context);
    const again = await handler(event('{ "n" : 1 }'), context);
    expect(runs).toBe(1);
    expect(first.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers[REPLAYED_HEADER]).toBe('true');
  });

  it('without a key it just runs, every time, and writes nothing', async () => {
    const store = new MemoryStore();
    let runs = 0;
    const handler = build(store, async () => ++runs);
    await handler(event('{"n":1}', {}), context);
    await handler(event('{"n":1}', {}), context);
    expect(runs).toBe(2);
    expect(store.items.size).toBe(0);
  });

  it('a bad body is refused before any record is written', async () => {
    const store = new MemoryStore();
    const handler = build(store, async () => 1);
    const answer = await handler(event('{"n":"x"}'), context);
    expect(answer.statusCode).toBe(500); // an unmapped error class: the point is that nothing was claimed
    expect(store.items.size).toBe(0);
  });

  it('an invalid key is a 400 and nothing is written', async () => {
    const store = new MemoryStore();
    const answer = await build(store, async () => 1)(event('{"n":1}', { 'Idempotency-Key': 'a b' }), context);
    expect(answer.statusCode).toBe(400);
    expect(store.items.size).toBe(0);
  });

  it('a thrown core releases the key (the retry runs again) and answers through httpErrors', async () => {
    const store = new MemoryStore();
    let fail = true;
    const handler = build(store, async () => {
      if (fail) throw new Error('storage down');
      return 7;
    });
    const failed = await handler(event('{"n":1}'), context);
    expect(failed.statusCode).toBe(500);
    expect(JSON.parse(failed.body).error.code).toBe('INTERNAL');
    expect(store.items.size).toBe(0);
    fail = false;
    expect(JSON.parse((await handler(event('{"n":1}'), context)).body)).toEqual({ ran: 7 });
  });

  it('the same key from another principal is another record', async () => {
    const store = new MemoryStore();
    let runs = 0;
    const handler = build(store, async () => ++runs);
    await handler(event('{"n":1}', undefined, 'alice'), context);
    await handler(event('{"n":1}', undefined, 'bob'), context);
    expect(runs).toBe(2);
  });

  it('the same key with another body is a 422, the core not run', async () => {
    const store = new MemoryStore();
    let runs = 0;
    const handler = build(store, async () => ++runs);
    await handler(event('{"n":1}'), context);
    const reused = await handler(event('{"n":2}'), context);
    expect(reused.statusCode).toBe(422);
    expect(runs).toBe(1);
  });

  it('an event without the authorizer context is refused before a key is claimed', async () => {
    const store = new MemoryStore();
    const e = event('{"n":1}');
    (e.requestContext as unknown as { authorizer?: unknown }).authorizer = undefined;
    const answer = await build(store, async () => 1)(e, context);
    expect(answer.statusCode).toBe(401);
    expect(store.items.size).toBe(0);
  });

  it('concurrent invocations of one handler keep their records apart', async () => {
    const store = new MemoryStore();
    const handler = build(store, async (body) => (body as { n: number }).n);
    const answers = await Promise.all(
      [1, 2, 3].map((n) => handler(event(`{"n":${n}}`, { 'idempotency-key': `k-${n}` }), context)),
    );
    expect(answers.map((a) => JSON.parse(a.body).ran)).toEqual([1, 2, 3]);
    expect([...store.items.values()].every((r) => r.status === 'completed')).toBe(true);
  });
});
