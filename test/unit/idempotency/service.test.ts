import {
  IdempotencyInProgressError,
  IdempotencyKeyInvalidError,
  IdempotencyKeyReusedError,
} from '../../../lib/idempotency/errors';
import { recordKey } from '../../../lib/idempotency/keys';
import {
  hashPayload,
  idempotencyKeyOf,
  idempotent,
  IN_PROGRESS_MS,
  REPLAYED_HEADER,
} from '../../../lib/idempotency/service';
import type { IdempotencyStore, StoredResponse } from '../../../lib/idempotency/store';
import { MemoryStore } from './memory-store';
import { createLogger } from '../../../lib/log';

const log = createLogger({}, { write: () => undefined });
const ok = (body: string): StoredResponse => ({
  statusCode: 201,
  headers: { 'content-type': 'application/json' },
  body,
});
const req = (payload: unknown, clientKey: string | undefined = 'k-1', principal = 'ops') => ({
  route: 'POST /downloads',
  principal,
  clientKey,
  payload,
});

describe('idempotent', () => {
  let now = 1_000_000;
  const deps = (store: IdempotencyStore) => ({ store, log, now: () => now });

  it('runs once and replays the stored answer to a retry with the same payload (key order does not matter)', async () => {
    const store = new MemoryStore();
    let runs = 0;
    const run = async () => ok(`{"n":${++runs}}`);
    const first = await idempotent(deps(store), req({ a: 1, b: [1, 2] }), run);
    const again = await idempotent(deps(store), req({ b: [1, 2], a: 1 }), run);
    expect(runs).toBe(1);
    expect(again.body).toBe(first.body);
    expect(again.headers[REPLAYED_HEADER]).toBe('true');
  });

  it('refuses the same key with another payload, and a retry while the first runs', async () => {
    const store = new MemoryStore();
    let release!: () => void;
    const slow = idempotent(
      deps(store),
      req({ a: 1 }),
      () => new Promise<StoredResponse>((r) => (release = () => r(ok('{}')))),
    );
    await new Promise((r) => setImmediate(r));
    await expect(idempotent(deps(store), req({ a: 1 }), async () => ok('{}'))).rejects.toBeInstanceOf(
      IdempotencyInProgressError,
    );
    await expect(idempotent(deps(store), req({ a: 2 }), async () => ok('{}'))).rejects.toBeInstanceOf(
      IdempotencyKeyReusedError,
    );
    release();
    await slow;
    await expect(idempotent(deps(store), req({ a: 2 }), async () => ok('{}'))).rejects.toBeInstanceOf(
      IdempotencyKeyReusedError,
    );
  });

  it('a failed attempt (thrown or 5xx) deletes its record: the retry runs again', async () => {
    const store = new MemoryStore();
    await expect(idempotent(deps(store), req({ a: 1 }), async () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    expect(store.items.size).toBe(0);
    const failed = await idempotent(deps(store), req({ a: 1 }), async () => ({ ...ok('{}'), statusCode: 503 }));
    expect(failed.statusCode).toBe(503);
    expect(store.items.size).toBe(0);
    expect((await idempotent(deps(store), req({ a: 1 }), async () => ok('{"ran":true}'))).body).toBe('{"ran":true}');
  });

  it('an attempt abandoned in progress (the function died) is taken over after its window', async () => {
    const store = new MemoryStore();
    store.items.set(recordKey('POST /downloads', 'ops', 'k-1').PK, {
      status: 'in_progress',
      payload_hash: hashPayload({ a: 1 }),
      token: 'dead',
      expires_at: now / 1000 + 100,
      in_progress_until: now + IN_PROGRESS_MS,
    });
    await expect(idempotent(deps(store), req({ a: 1 }), async () => ok('{}'))).rejects.toBeInstanceOf(
      IdempotencyInProgressError,
    );
    now += IN_PROGRESS_MS + 1;
    expect((await idempotent(deps(store), req({ a: 1 }), async () => ok('{"taken":1}'))).body).toBe('{"taken":1}');
  });

  it('keys are scoped by caller: another principal with the same key runs its own request', async () => {
    const store = new MemoryStore();
    await idempotent(deps(store), req({ a: 1 }, 'k', 'alice'), async () => ok('{"who":"alice"}'));
    expect((await idempotent(deps(store), req({ a: 2 }, 'k', 'bob'), async () => ok('{"who":"bob"}'))).body).toBe(
      '{"who":"bob"}',
    );
  });

  it('an answer whose record could not be completed is still returned', async () => {
    const store = new MemoryStore();
    store.failComplete = true;
    expect((await idempotent(deps(store), req({ a: 1 }), async () => ok('{"x":1}'))).statusCode).toBe(201);
  });

  it('no key: just runs', async () => {
    const store = new MemoryStore();
    await idempotent(deps(store), { ...req({ a: 1 }), clientKey: undefined }, async () => ok('{}'));
    expect(store.items.size).toBe(0);
  });
});

describe('idempotencyKeyOf', () => {
  it('reads the header in any case and refuses a malformed key', () => {
    expect(idempotencyKeyOf({ 'Idempotency-Key': 'abc-123' })).toBe('abc-123');
    expect(idempotencyKeyOf({})).toBeUndefined();
    for (const bad of ['', 'has space', 'x'.repeat(256), 'é'])
      expect(() => idempotencyKeyOf({ 'idempotency-key': bad })).toThrow(IdempotencyKeyInvalidError);
  });
});
