import { randomUUID } from 'node:crypto';
import { v1, downloadsStore, itemsAbout } from '../../support/downloads';
import { call } from '../../support/http';

/**
 * POST /downloads with `Idempotency-Key` through serverless offline and
 * DynamoDB Local (issue 11): a retry of the same ingest is the first answer
 * replayed, never a second download; the same key with another body is 422.
 */

const { aws, table } = downloadsStore();
const downloadsOf = async (hash: string) =>
  (await itemsAbout(aws, table, [hash])).filter((i) => String(i.SK).startsWith('DL#'));

describe('POST /downloads with an Idempotency-Key', () => {
  it('a retry with the same key and body (other spacing and key order) replays the 201, same id, one download', async () => {
    const key = randomUUID();
    const hash = v1().infohash;
    const first = await call(
      'POST',
      '/downloads',
      { infohashes: [hash], name: 'idem-once' },
      { 'idempotency-key': key },
    );
    expect(first.status).toBe(201);
    const retry = await call('POST', '/downloads', `{ "name" : "idem-once", "infohashes" : ["${hash}"] }`, {
      'idempotency-key': key,
    });
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('location')).toBe(`/downloads/${first.body.id}`);
    expect(await downloadsOf(hash)).toHaveLength(1);
  });

  it('the same key with another body is 422 and writes nothing', async () => {
    const key = randomUUID();
    await call('POST', '/downloads', { infohashes: [v1().infohash] }, { 'idempotency-key': key });
    const other = v1().infohash;
    const res = await call('POST', '/downloads', { infohashes: [other] }, { 'idempotency-key': key });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await itemsAbout(aws, table, [other])).toEqual([]);
  });

  it('concurrent retries with one key: one download, every success is the same answer, the rest 409 in progress', async () => {
    const key = randomUUID();
    const hash = v1().infohash;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => call('POST', '/downloads', { infohashes: [hash] }, { 'idempotency-key': key })),
    );
    const ok = answers.filter((a) => a.status === 201);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((a) => a.body.id)).size).toBe(1);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(409);
      expect(a.body.error.code).toBe('IDEMPOTENCY_IN_PROGRESS');
      expect(a.headers.get('retry-after')).toBeTruthy();
    }
    expect(await downloadsOf(hash)).toHaveLength(1);
    // Once done, a late retry is a replay.
    const late = await call('POST', '/downloads', { infohashes: [hash] }, { 'idempotency-key': key });
    expect(late.status).toBe(201);
    expect(late.body.id).toBe(ok[0].body.id);
  });

  it('a malformed key is 400 and writes nothing; no key keeps the old behaviour (200 for the active download)', async () => {
    const hash = v1().infohash;
    const bad = await call('POST', '/downloads', { infohashes: [hash] }, { 'idempotency-key': 'has a space' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('IDEMPOTENCY_KEY_INVALID');
    expect(await itemsAbout(aws, table, [hash])).toEqual([]);
    expect((await call('POST', '/downloads', { infohashes: [hash] })).status).toBe(201);
    expect((await call('POST', '/downloads', { infohashes: [hash] })).status).toBe(200);
  });
});
