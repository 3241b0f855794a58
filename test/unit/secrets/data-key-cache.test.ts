import { DataKeyCache } from '../../../lib/secrets/data-key-cache';

/** The container's cache of plaintext data keys: by (encrypted key, context), bounded in age and count. */
const key = (n: number) => Buffer.alloc(32, n);
const edk = (n: number) => Buffer.from(`encrypted-${n}`);

function setup(maxEntries = 3) {
  let now = 0;
  const cache = new DataKeyCache({ maxAgeMs: 300_000, maxEntries, now: () => now });
  const loads: string[] = [];
  const get = (n: number, context = 'ctx') =>
    cache.get(edk(n), context, async () => {
      loads.push(`${n}/${context}`);
      return key(n);
    });
  return { cache, loads, get, at: (ms: number) => (now = ms) };
}

it('loads a key once while fresh, again after five minutes', async () => {
  const s = setup();
  expect(await s.get(1)).toEqual(key(1));
  s.at(299_999);
  await s.get(1);
  expect(s.loads).toEqual(['1/ctx']);
  s.at(300_000);
  await s.get(1);
  expect(s.loads).toEqual(['1/ctx', '1/ctx']);
});

it('keys by the context too: the same encrypted key under another context is another entry', async () => {
  const s = setup();
  await s.get(1, 'sync-connection:a');
  await s.get(1, 'sync-connection:b');
  // A context that ends like another's start cannot alias it (length-prefixed).
  await s.get(1, 'sync-connection:a:');
  expect(s.loads).toEqual(['1/sync-connection:a', '1/sync-connection:b', '1/sync-connection:a:']);
});

it('callers asking at the same time share one load', async () => {
  const s = setup();
  await Promise.all([s.get(1), s.get(1), s.get(1)]);
  expect(s.loads).toEqual(['1/ctx']);
});

it('keeps no failure: the next caller loads again', async () => {
  const s = setup();
  await expect(s.cache.get(edk(1), 'ctx', async () => Promise.reject(new Error('KMS refused')))).rejects.toThrow();
  await Promise.resolve();
  expect(await s.get(1)).toEqual(key(1));
  expect(s.loads).toEqual(['1/ctx']);
});

it('holds at most maxEntries, dropping the oldest first', async () => {
  const s = setup(3);
  for (const n of [1, 2, 3, 4]) await s.get(n);
  expect(s.cache.size).toBe(3);
  await s.get(2);
  await s.get(1);
  expect(s.loads).toEqual(['1/ctx', '2/ctx', '3/ctx', '4/ctx', '1/ctx']);
});
