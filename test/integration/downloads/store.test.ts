import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { DynamoDownloadStore } from '../../../lib/downloads/dynamodb-store';
import { guardFromItem } from '../../../lib/downloads/keys';
import { ActiveExistsError, InfohashTakenError, InvalidTransitionError } from '../../../lib/downloads/errors';
import { Infohash } from '../../../lib/downloads/infohash';
import { DOWNLOAD_STATES, isActive } from '../../../lib/downloads/model';
import { assertOneActivePerHash, downloadsStore, itemsAbout, v1, v2 } from '../../support/downloads';

const { aws, table, store } = downloadsStore();
afterAll(() => aws.dynamodb.destroy());

const ingest = (hashes: Infohash[], name = 'torrent') =>
  store.createDownloadIfNoActive({ state: 'queued', name }, hashes);
const hashesOf = (hs: Infohash[]) => hs.map((h) => h.infohash);

describe('createDownloadIfNoActive', () => {
  it('creates, then dedups onto the active owner and appends the hashes it lacks', async () => {
    const [a, b] = [v1(), v2()];
    const first = await ingest([a]);
    expect(first.created).toBe(true);
    const again = await ingest([a, b]);
    expect(again.created).toBe(false);
    expect(again.download.id).toBe(first.download.id);
    expect(again.download.infohashes).toEqual([a, b]);
    expect((await store.findActiveByInfohash(b.infohash))?.id).toBe(first.download.id);
    await assertOneActivePerHash(aws, table, hashesOf([a, b]));
  });

  it('50 concurrent ingests of one hybrid (v1 only, v2 only, both) end with ONE active download holding both', async () => {
    const hybrid = [v1(), v2()];
    const shapes = Array.from({ length: 50 }, (_, i) =>
      i % 3 === 0 ? [hybrid[0]] : i % 3 === 1 ? [hybrid[1]] : hybrid,
    );
    const results = await Promise.all(shapes.map((hs) => ingest(hs)));

    const active = await store.findActiveByInfohash(hybrid[0].infohash);
    expect(active).toBeDefined();
    expect(active!.infohashes).toEqual(hybrid);
    expect((await store.findActiveByInfohash(hybrid[1].infohash))?.id).toBe(active!.id);
    // Every caller's id is the survivor, or a download merged into it.
    for (const { download } of results) {
      if (download.id === active!.id) continue;
      const now = await store.get(download.id);
      expect(now).toMatchObject({ state: 'cancelled', merged_into: active!.id });
    }
    expect(results.filter((r) => r.created).length).toBeLessThanOrEqual(2);
    await assertOneActivePerHash(aws, table, hashesOf(hybrid));
  }, 60_000);

  it('re-ingest after the active one finished creates a new download; the hash keeps its history', async () => {
    const h = v1();
    const first = await ingest([h]);
    await store.setDownloadState(first.download.id, 'queued', 'completed');
    expect(await store.findActiveByInfohash(h.infohash)).toBeUndefined();
    const second = await ingest([h]);
    expect(second.created).toBe(true);
    expect(second.download.id).not.toBe(first.download.id);
    expect((await store.historyOfInfohash(h.infohash)).map((d) => d.id)).toEqual([
      second.download.id,
      first.download.id,
    ]);
    await assertOneActivePerHash(aws, table, [h.infohash]);
  });
});

describe('the fast dedup read', () => {
  it('a stale hint (the owner finished, or lost a hash) never answers: the guarded path decides', async () => {
    const [a, b] = [v1(), v2()];
    const first = await ingest([a]);
    expect((await ingest([a])).download.id).toBe(first.download.id); // answered by the read
    await store.setDownloadState(first.download.id, 'queued', 'completed');
    const second = await ingest([a]);
    expect(second.created).toBe(true); // the hint named a finished download: not an answer
    expect((await ingest([a, b])).download.infohashes).toEqual([a, b]); // holds only a: the transaction appends b
    await assertOneActivePerHash(aws, table, hashesOf([a, b]));
  });

  it('re-ingests racing completions and new ingests keep one active download per hash', async () => {
    const hashes = Array.from({ length: 6 }, v1);
    await Promise.all(hashes.map((h) => ingest([h])));
    await Promise.all(
      hashes.flatMap((h) => [
        ...Array.from({ length: 6 }, () => ingest([h])),
        (async () => {
          const owner = await store.findActiveByInfohash(h.infohash);
          if (owner) await store.setDownloadState(owner.id, owner.state, 'completed').catch(() => undefined);
        })(),
      ]),
    );
    await assertOneActivePerHash(aws, table, hashesOf(hashes));
  });
});

describe('activateIfNoOtherActive', () => {
  it('of two finished downloads sharing a hash, racing retries activate exactly one', async () => {
    const shared = v1();
    const a = (await ingest([shared, v2()])).download;
    await store.setDownloadState(a.id, 'queued', 'failed');
    const b = (await ingest([shared])).download;
    await store.setDownloadState(b.id, 'queued', 'cancelled');

    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 10 }, () => store.activateIfNoOtherActive(a.id, 'queued')),
      ...Array.from({ length: 10 }, () => store.activateIfNoOtherActive(b.id, 'queued')),
    ]);
    const winners = new Set(outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.id] : [])));
    expect(winners.size).toBe(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(ActiveExistsError);
    await assertOneActivePerHash(aws, table, hashesOf([shared]));
  });

  it('lets a stuck download be re-activated (itself excluded) but not past another owner', async () => {
    const h = v1();
    const stuck = (await ingest([h])).download;
    await store.setDownloadState(stuck.id, 'queued', 'stuck');
    expect((await store.activateIfNoOtherActive(stuck.id, 'queued')).state).toBe('queued');

    await store.setDownloadState(stuck.id, 'queued', 'failed');
    const owner = (await ingest([h])).download;
    const before = await itemsAbout(aws, table, [h.infohash, stuck.id]);
    const refused = store.activateIfNoOtherActive(stuck.id, 'queued');
    await expect(refused).rejects.toBeInstanceOf(ActiveExistsError);
    await expect(refused).rejects.toMatchObject({ ownerId: owner.id, infohash: h.infohash });
    expect(await itemsAbout(aws, table, [h.infohash, stuck.id])).toEqual(before);
  });
});

describe('addInfohashes', () => {
  it('refuses a hash owned by another active download, changing nothing', async () => {
    const [h1, h2] = [v1(), v1()];
    const a = (await ingest([h1])).download;
    const b = (await ingest([h2])).download;
    const before = await itemsAbout(aws, table, [h1.infohash, h2.infohash, a.id, b.id]);
    await expect(store.addInfohashes(a.id, [h2])).rejects.toMatchObject({
      constructor: InfohashTakenError,
      ownerId: b.id,
    });
    expect(await itemsAbout(aws, table, [h1.infohash, h2.infohash, a.id, b.id])).toEqual(before);
  });

  it('racing appends of one hash to two active downloads: exactly one gets it', async () => {
    const h = v2();
    const a = (await ingest([v1()])).download;
    const b = (await ingest([v1()])).download;
    const outcomes = await Promise.allSettled([store.addInfohashes(a.id, [h]), store.addInfohashes(b.id, [h])]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    await assertOneActivePerHash(aws, table, [h.infohash]);
  });
});

describe('setDownloadState', () => {
  it('refuses terminal → active and a stale `from`, changing nothing', async () => {
    const d = (await ingest([v1()])).download;
    await store.setDownloadState(d.id, 'queued', 'downloading');
    await expect(store.setDownloadState(d.id, 'queued', 'paused')).rejects.toBeInstanceOf(InvalidTransitionError);
    await store.setDownloadState(d.id, 'downloading', 'completed');
    const before = await itemsAbout(aws, table, [d.id, d.infohashes[0].infohash]);
    await expect(store.setDownloadState(d.id, 'completed', 'downloading')).rejects.toBeInstanceOf(
      InvalidTransitionError,
    );
    await expect(store.setDownloadState(d.id, 'completed', 'failed')).rejects.toBeInstanceOf(InvalidTransitionError);
    expect(await itemsAbout(aws, table, [d.id, d.infohashes[0].infohash])).toEqual(before);
  });

  it('racing CAS transitions from one state: exactly one wins', async () => {
    const d = (await ingest([v1()])).download;
    const outcomes = await Promise.allSettled(
      (['completed', 'failed', 'cancelled', 'paused', 'downloading'] as const).map((to) =>
        store.setDownloadState(d.id, 'queued', to),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    await assertOneActivePerHash(aws, table, hashesOf(d.infohashes));
  });
});

describe('model-based: random interleavings keep one active download per hash', () => {
  it('holds after every step', async () => {
    const states = fc.constantFrom(...DOWNLOAD_STATES);
    const op = fc.oneof(
      fc.record({ kind: fc.constant('ingest' as const), hashes: fc.subarray([0, 1, 2, 3], { minLength: 1 }) }),
      fc.record({ kind: fc.constant('state' as const), target: fc.nat(), to: states }),
      fc.record({ kind: fc.constant('activate' as const), target: fc.nat() }),
      fc.record({ kind: fc.constant('add' as const), target: fc.nat(), hash: fc.integer({ min: 0, max: 3 }) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { minLength: 3, maxLength: 8 }),
        async (steps) => {
          const pool = [v1(), v1(), v2(), v2()];
          const ids: string[] = [];
          const pick = (n: number) => ids[n % ids.length];
          for (const step of steps) {
            // Each step's operations run concurrently: the interleaving is the adversary.
            await Promise.allSettled(
              step.map(async (o) => {
                if (o.kind === 'ingest') return ids.push((await ingest(o.hashes.map((i) => pool[i]))).download.id);
                if (ids.length === 0) return;
                const id = pick(o.target);
                if (o.kind === 'add') return store.addInfohashes(id, [pool[o.hash]]);
                if (o.kind === 'activate') return store.activateIfNoOtherActive(id, 'queued');
                const current = await store.get(id);
                return store.setDownloadState(id, current!.state, o.to);
              }),
            );
            await assertOneActivePerHash(aws, table, hashesOf(pool));
          }
          // And every active download's hashes are guarded by it.
          for (const id of new Set(ids)) {
            const d = await store.get(id);
            if (d && isActive(d.state))
              for (const h of d.infohashes) expect((await store.findActiveByInfohash(h.infohash))?.id).toBe(d.id);
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 240_000);
});

describe('hash records carry created_at (the design: written when the record is created, kept by every later write)', () => {
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
  const timed = new DynamoDownloadStore({ documents: aws.documents, table, now: () => clock.now });
  const records = async (hash: string) =>
    Object.fromEntries(
      (await itemsAbout(aws, table, [hash])).map((i) => [i.SK as string, { created_at: i.created_at, since: i.since }]),
    );

  it('the guard and the membership keep the time they were created through a re-hold, an append and a merge', async () => {
    const [a, b] = [v1(), v2()];
    const t0 = new Date(clock.now).toISOString();
    const first = (await timed.createDownloadIfNoActive({ state: 'queued', name: 'x' }, [a])).download;
    expect(await records(a.infohash)).toEqual({
      ACTIVE: { created_at: t0, since: t0 },
      [`DL#${first.id}`]: { created_at: t0, since: undefined },
    });
    // Later writes of the same records: the stuck download retried holds its guard again (since moves on).
    clock.now += 60_000;
    const t1 = new Date(clock.now).toISOString();
    await timed.setDownloadState(first.id, 'queued', 'stuck');
    await timed.activateIfNoOtherActive(first.id, 'queued');
    await timed.addInfohashes(first.id, [b]);
    expect((await records(a.infohash)).ACTIVE).toEqual({ created_at: t0, since: t1 });
    expect(await records(b.infohash)).toEqual({
      ACTIVE: { created_at: t1, since: t1 },
      [`DL#${first.id}`]: { created_at: t1, since: undefined },
    });
  });

  it('a guard moved by a merge keeps its created_at; the survivor’s new membership is created then', async () => {
    const [a, b] = [v1(), v1()];
    const t0 = new Date(clock.now).toISOString();
    const older = (await timed.createDownloadIfNoActive({ state: 'queued', name: 'x' }, [a])).download;
    const newer = (await timed.createDownloadIfNoActive({ state: 'queued', name: 'x' }, [b])).download;
    clock.now += 60_000;
    const t1 = new Date(clock.now).toISOString();
    // One torrent ingested with both hashes: its two owners merge, the newer's hash moving to the older.
    const merged = await timed.createDownloadIfNoActive({ state: 'queued', name: 'x' }, [a, b]);
    expect(merged.download.id).toBe(older.id);
    const rb = await records(b.infohash);
    expect(rb.ACTIVE).toEqual({ created_at: t0, since: t1 });
    expect(rb[`DL#${newer.id}`]).toEqual({ created_at: t0, since: undefined });
    expect(rb[`DL#${older.id}`]).toEqual({ created_at: t1, since: undefined });
  });

  it('records written before the field read as before', async () => {
    const h = v1();
    const d = (await timed.createDownloadIfNoActive({ state: 'queued', name: 'x' }, [h])).download;
    for (const SK of ['ACTIVE', `DL#${d.id}`])
      await aws.documents.send(
        new UpdateCommand({
          TableName: table,
          Key: { PK: `IH#${h.infohash}`, SK },
          UpdateExpression: 'REMOVE created_at',
        }),
      );
    expect((await timed.findActiveByInfohash(h.infohash))?.id).toBe(d.id);
    expect((await timed.historyOfInfohash(h.infohash)).map((x) => x.id)).toEqual([d.id]);
    expect(guardFromItem((await itemsAbout(aws, table, [h.infohash])).find((i) => i.SK === 'ACTIVE')!)).toEqual({
      infohash: h.infohash,
      download_id: d.id,
      since: d.created_at,
    });
  });
});
