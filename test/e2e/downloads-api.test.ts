import { idTime } from '../../lib/ident';
import { assertOneActivePerHash, downloadsStore, itemsAbout, v1, v2 } from '../support/downloads';
import { call, emulatorProfile, emulatorTorrent, emulatorTorrents } from '../support/http';
import { invokeScheduled } from '../support/stack';
import { PROFILES } from '../../emulator/qbittorrent/emulator';

/** The downloads API exactly as a client uses it: HTTP through serverless offline, the stack's emulator behind it. */
const { aws, table } = downloadsStore();
afterAll(() => aws.dynamodb.destroy());

const ULID = /^[0-9a-hjkmnp-tv-z]{26}$/;

// The whole suite against each qBittorrent the emulator plays (a matrix): the service must not care which.
describe.each(PROFILES)('against qBittorrent %s', (profile) => {
  beforeAll(() => emulatorProfile(profile));
  afterAll(() => emulatorProfile('5.1'));

  describe('POST /downloads', () => {
    it('creates from a hybrid magnet (201), hands it to the client, then dedups (200) and appends a new hash', async () => {
      const [a, b] = [v1(), v2()];
      const magnet = `magnet:?xt=urn:btih:${a.infohash}&xt=urn:btmh:1220${b.infohash}&dn=Sintel`;
      const created = await call('POST', '/downloads', { magnet });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(ULID),
        state: 'queued',
        name: 'Sintel',
        infohashes: [a, b],
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(created.body).not.toHaveProperty('infohash');
      expect(created.headers.get('location')).toBe(`/downloads/${created.body.id}`);
      expect((await emulatorTorrents()).some((t) => t.infohash_v2 === b.infohash)).toBe(true);

      const again = await call('POST', '/downloads', { infohashes: [b.infohash.toUpperCase()] });
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(created.body.id);
    });

    it('answers concurrent ingests of one hash with one id', async () => {
      const h = v1();
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => call('POST', '/downloads', { infohashes: [h.infohash], name: 'race' })),
      );
      expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
      expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
      await assertOneActivePerHash(aws, table, [h.infohash]);
    });

    const V1 = 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a';
    it.each([
      ['a malformed magnet', { magnet: `magnet:?xt=urn:btih:${V1.slice(2)}zz` }, 400, 'INVALID_MAGNET', {}],
      [
        'a wrong multihash',
        { magnet: `magnet:?xt=urn:btih:${V1}&xt=urn:btmh:1114${'a'.repeat(64)}` },
        400,
        'INVALID_MAGNET',
        {},
      ],
      ['a bad infohash', { infohashes: [V1, 'abc'] }, 400, 'INVALID_INFOHASH', {}],
      ['an unknown field', { infohashes: [V1], owner: 'me' }, 400, 'INVALID_REQUEST', {}],
      ['17 infohashes', { infohashes: Array(17).fill(V1) }, 400, 'INVALID_REQUEST', {}],
      [
        'a body over 64 KiB',
        { infohashes: [V1], name: 'n'.repeat(70 * 1024) },
        413,
        'PAYLOAD_TOO_LARGE',
        { limit: 65536 },
      ],
      ['not JSON', `{"infohashes": ["${V1}"`, 400, 'INVALID_REQUEST', {}],
      [
        'JSON nested 40 deep',
        `{"infohashes": ["${V1}"], "x": ${'['.repeat(40) + ']'.repeat(40)}}`,
        400,
        'INVALID_REQUEST',
        { limit: 16 },
      ],
    ])('refuses %s with a clear error and writes nothing', async (_name, body, status, code, details) => {
      const answer = await call('POST', '/downloads', body);
      expect(answer.status).toBe(status);
      expect(answer.body.error).toEqual({ code, message: expect.any(String), ...details });
      expect(await itemsAbout(aws, table, [`IH#${V1}|`])).toEqual([]);
    });
  });

  describe('GET /downloads/{id} and the id edge', () => {
    it('finds by id in any case; every malformed id is a 404', async () => {
      const { body } = await call('POST', '/downloads', { infohashes: [v1().infohash] });
      expect((await call('GET', `/downloads/${body.id}`)).body.id).toBe(body.id);
      expect((await call('GET', `/downloads/${body.id.toUpperCase()}`)).body.id).toBe(body.id);
      for (const bad of [
        '12345',
        body.id.slice(1),
        `${body.id}0`,
        body.id.slice(0, 25) + 'u',
        'not-an-id-at-all-but-26chr',
      ]) {
        const answer = await call('GET', `/downloads/${bad}`);
        expect([answer.status, answer.body.error.code]).toEqual([404, 'NOT_FOUND']);
      }
    });
  });

  describe('GET /downloads', () => {
    it('lists newest first with cursors, and searches by infohash prefix and by name', async () => {
      const tag = `list-${Date.now()}`;
      const made = [];
      for (let i = 0; i < 5; i++)
        made.push((await call('POST', '/downloads', { infohashes: [v1().infohash], name: `${tag} #${i}` })).body);

      const pages: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await call(
          'GET',
          `/downloads?q=${encodeURIComponent(tag.toUpperCase())}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(page.status).toBe(200);
        pages.push(...page.body.items.map((d: { id: string }) => d.id));
        cursor = page.body.cursor;
      } while (cursor);
      expect(pages).toEqual(made.map((d) => d.id).reverse());
      expect(idTime(pages[0])).toBeGreaterThanOrEqual(idTime(pages[4]));

      const prefix = made[2].infohashes[0].infohash.slice(0, 12);
      const byHash = await call('GET', `/downloads?q=${prefix}`);
      expect(byHash.body.items.map((d: { id: string }) => d.id)).toEqual([made[2].id]);

      for (const q of ['limit=0', 'limit=101', 'cursor=forged', 'q=' + 'x'.repeat(129), 'order=asc']) {
        expect((await call('GET', `/downloads?${q}`)).status).toBe(400);
      }
    });
  });

  describe('state, retry and infohashes', () => {
    it('moves state by CAS and refuses terminal → active', async () => {
      const { body } = await call('POST', '/downloads', { infohashes: [v1().infohash] });
      expect((await call('POST', `/downloads/${body.id}/state`, { state: 'paused' })).body.state).toBe('paused');
      expect((await call('POST', `/downloads/${body.id}/state`, { state: 'cancelled' })).body.state).toBe('cancelled');
      const back = await call('POST', `/downloads/${body.id}/state`, { state: 'downloading' });
      expect([back.status, back.body.error.code, back.body.error.state]).toEqual([
        409,
        'INVALID_TRANSITION',
        'cancelled',
      ]);
      expect((await call('POST', `/downloads/${body.id}/state`, { state: 'exploded' })).status).toBe(400);
    });

    it('retry: 409 ACTIVE_EXISTS with the owner when another download holds a hash, 200 when free', async () => {
      const h = v1();
      const first = (await call('POST', '/downloads', { infohashes: [h.infohash] })).body;
      await call('POST', `/downloads/${first.id}/state`, { state: 'failed' });
      const second = (await call('POST', '/downloads', { infohashes: [h.infohash] })).body;
      expect(second.id).not.toBe(first.id);

      const refused = await call('POST', `/downloads/${first.id}/retry`);
      expect([refused.status, refused.body.error.code, refused.body.error.owner_id]).toEqual([
        409,
        'ACTIVE_EXISTS',
        second.id,
      ]);
      expect((await call('POST', `/downloads/${second.id}/retry`)).status).toBe(409); // queued is not retryable

      await call('POST', `/downloads/${second.id}/state`, { state: 'cancelled' });
      expect((await call('POST', `/downloads/${first.id}/retry`)).body.state).toBe('queued');
      await assertOneActivePerHash(aws, table, [h.infohash]);
    });

    it('appends infohashes; one owned by another active download is 409 INFOHASH_TAKEN with the owner', async () => {
      const [a, b, c] = [v1(), v1(), v2()];
      const one = (await call('POST', '/downloads', { infohashes: [a.infohash] })).body;
      const two = (await call('POST', '/downloads', { infohashes: [b.infohash] })).body;
      expect(
        (await call('POST', `/downloads/${one.id}/infohashes`, { infohashes: [c.infohash] })).body.infohashes,
      ).toEqual([a, c]);
      const taken = await call('POST', `/downloads/${one.id}/infohashes`, { infohashes: [b.infohash] });
      expect([taken.status, taken.body.error.code, taken.body.error.owner_id]).toEqual([409, 'INFOHASH_TAKEN', two.id]);
    });
  });

  describe('the poll, invoked as the scheduler would', () => {
    it('adopts the client torrents of our category through the deployed function, with their progress', async () => {
      const t = await emulatorTorrent({ kind: 'v2', state: 'stalledDL', name: 'adopt-me', progress: 0.5 });
      await invokePoll();
      const found = await call('GET', `/downloads?q=${t.infohash_v2!.slice(0, 16)}`);
      expect(found.body.items).toEqual([
        expect.objectContaining({
          name: 'adopt-me',
          state: 'downloading',
          progress: 0.5,
          infohashes: [{ infohash: t.infohash_v2, kind: 'v2' }],
        }),
      ]);
    });

    it('a cancel removes the torrent from the client, and the next poll does not bring the download back', async () => {
      const h = v1();
      const created = (await call('POST', '/downloads', { infohashes: [h.infohash], name: 'cancel-me' })).body;
      expect((await emulatorTorrents()).some((t) => t.hash === h.infohash)).toBe(true);
      expect((await call('POST', `/downloads/${created.id}/state`, { state: 'cancelled' })).body.state).toBe(
        'cancelled',
      );
      expect((await emulatorTorrents()).some((t) => t.hash === h.infohash)).toBe(false);
      await invokePoll();
      expect((await call('GET', `/downloads/${created.id}`)).body.state).toBe('cancelled');
    });
  });
});

async function invokePoll(): Promise<void> {
  expect((await invokeScheduled('downloadsPoll')).FunctionError).toBeUndefined();
}
