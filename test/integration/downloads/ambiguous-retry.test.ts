import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createAwsClients } from '../../../lib/aws/clients';
import { DynamoDownloadStore } from '../../../lib/downloads/dynamodb-store';
import { ingest, retry } from '../../../lib/downloads/service';
import { silentLogger } from '../../../lib/log';
import type { TorrentClient } from '../../../lib/torrents/client';
import { assertOneActivePerHash, downloadsStore, v1, v2 } from '../../support/downloads';
import { stackConfig } from '../../support/stack';

/**
 * "Applied, but the answer was lost": DynamoDB Local commits the transaction,
 * then the connection resets before we read the answer. The SDK (inside its
 * retry loop) or transactWrite (outside it) sends the write again; the
 * ClientRequestToken makes that resend a no-op instead of a collision with
 * the guards the first send wrote.
 */
const { aws, table } = downloadsStore();
afterAll(() => aws.dynamodb.destroy());

const torrents: TorrentClient = {
  snapshot: async () => ({ full: true, changed: [], present: [] }),
  add: async () => undefined,
  remove: async () => undefined,
  removeOwn: async () => [],
  setShareLimits: async () => undefined,
  stop: async () => undefined,
  start: async () => undefined,
  category: 'torrent-scan-sync',
  categories: async () => new Map(),
  createCategory: async () => true,
};

type Where = 'sdk' | 'ours';

/** A client whose next `n` TransactWriteItems lose their answer AFTER DynamoDB applied them. */
function faultyStore(where: Where) {
  const clients = createAwsClients(stackConfig());
  const faults = { pending: 0, injected: 0 };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the SDK's middleware arguments are untyped here
  const loseAnswer = (next: (args: any) => Promise<any>) => async (args: any) => {
    const out = await next(args);
    if (faults.pending > 0 && args.input?.TransactItems) {
      faults.pending--;
      faults.injected++;
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    }
    return out;
  };
  // deserialize runs inside the SDK's retry loop; initialize outside it (our own retry then resends).
  (clients.documents as DynamoDBDocumentClient).middlewareStack.add(loseAnswer, {
    step: (where === 'sdk' ? 'deserialize' : 'initialize') as 'deserialize',
    name: 'loseAnswer',
  });
  const store = new DynamoDownloadStore({ documents: clients.documents, table });
  return { store, faults, deps: { store, torrents, log: silentLogger }, close: () => clients.dynamodb.destroy() };
}

describe.each<Where>(['sdk', 'ours'])('a TransactWriteItems applied but answered by a reset (retry by %s)', (where) => {
  const f = faultyStore(where);
  afterAll(() => f.close());

  it('ingest creates exactly once and says created', async () => {
    const h = v1();
    f.faults.pending = 1;
    const result = await ingest(f.deps, { infohashes: [h.infohash], name: 'ambiguous' });
    expect(f.faults.injected).toBeGreaterThan(0);
    expect(result.created).toBe(true);
    const stored = await f.store.get(result.download.id);
    expect(stored).toMatchObject({ state: 'queued', revision: 1 });
    expect((await f.store.findActiveByInfohash(h.infohash))?.id).toBe(result.download.id);
    expect((await f.store.historyOfInfohash(h.infohash)).map((d) => d.id)).toEqual([result.download.id]);
    await assertOneActivePerHash(aws, table, [h.infohash]);
  });

  it('retry activates exactly once', async () => {
    const h = v1();
    const { download } = await ingest(f.deps, { infohashes: [h.infohash] });
    await f.store.setDownloadState(download.id, 'queued', 'failed');
    f.faults.pending = 1;
    const retried = await retry(f.deps, download.id);
    expect(retried).toMatchObject({ state: 'queued', revision: 3 });
    expect(await f.store.get(download.id)).toMatchObject({ state: 'queued', revision: 3 });
    await assertOneActivePerHash(aws, table, [h.infohash]);
  });

  it('addInfohashes appends exactly once', async () => {
    const [a, b] = [v1(), v2()];
    const { download } = await ingest(f.deps, { infohashes: [a.infohash] });
    f.faults.pending = 1;
    const after = await f.store.addInfohashes(download.id, [b]);
    expect(new Set(after.infohashes.map((h) => h.infohash))).toEqual(new Set([a.infohash, b.infohash]));
    expect(await f.store.get(download.id)).toMatchObject({ revision: 2 });
    expect((await f.store.findActiveByInfohash(b.infohash))?.id).toBe(download.id);
    await assertOneActivePerHash(aws, table, [a.infohash, b.infohash]);
  });

  it('a state change that releases guards is not refused by its own resend', async () => {
    const h = v1();
    const { download } = await ingest(f.deps, { infohashes: [h.infohash] });
    f.faults.pending = 1;
    await expect(f.store.setDownloadState(download.id, 'queued', 'cancelled')).resolves.toMatchObject({
      state: 'cancelled',
      revision: 2,
    });
    expect(await f.store.findActiveByInfohash(h.infohash)).toBeUndefined();
  });
});
