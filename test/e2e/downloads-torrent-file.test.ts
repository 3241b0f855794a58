import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { assertOneActivePerHash, downloadsStore } from '../support/downloads';
import { bearer, call, emulatorTorrents } from '../support/http';
import { httpUrl } from '../support/stack';
import { bencode, buildTorrent, finish } from '../support/torrent-build';

/**
 * .torrent files through POST /downloads, as a client sends them: multipart (the part `torrent`) and base64 in
 * JSON (`torrent_base64`), through serverless offline (which base64-encodes a multipart body) to the stack's
 * qBittorrent emulator, which reads the uploaded file as the real client does.
 */
const { aws, table } = downloadsStore();
afterAll(() => aws.dynamodb.destroy());

async function upload(file: Buffer, fields: Record<string, string> = {}, filename = 'my file.torrent') {
  const form = new FormData();
  form.append('torrent', new Blob([new Uint8Array(file)], { type: 'application/x-bittorrent' }), filename);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(httpUrl('/downloads'), { method: 'POST', headers: bearer(), body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const hashesOf = (built: { v1?: string; v2?: string }) => [
  ...(built.v1 ? [{ infohash: built.v1, kind: 'v1' }] : []),
  ...(built.v2 ? [{ infohash: built.v2, kind: 'v2' }] : []),
];

/** Every item of the downloads table: what "nothing written" is checked against (the stack suites run one at a time). */
async function tableItems(): Promise<number> {
  let count = 0;
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await aws.documents.send(new ScanCommand({ TableName: table, ExclusiveStartKey, Select: 'COUNT' }));
    count += page.Count ?? 0;
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return count;
}

describe.each(['v1', 'v2', 'hybrid'] as const)('a %s .torrent', (kind) => {
  it('multipart: 201 with the file’s own hashes, handed to the client as the file (its metadata known at once)', async () => {
    const built = buildTorrent(kind, { name: `upload-${kind}.bin` });
    const created = await upload(built.file);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ state: 'queued', name: `upload-${kind}.bin`, infohashes: hashesOf(built) });
    const inClient = (await emulatorTorrents()).find(
      (t) => (t.infohash_v1 || undefined) === built.v1 && (t.infohash_v2 || undefined) === built.v2,
    );
    expect(inClient).toMatchObject({
      name: `upload-${kind}.bin`,
      category: 'torrent-scan-sync',
      tags: created.body.id,
      has_metadata: true,
    });

    // The same torrent again, as base64 JSON: the existing active download, 200.
    const again = await call('POST', '/downloads', { torrent_base64: built.file.toString('base64') });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(created.body.id);
  });
});

it('base64 JSON with a name of our own: the client gets the file under that name', async () => {
  const built = buildTorrent('hybrid');
  const created = await call('POST', '/downloads', {
    torrent_base64: built.file.toString('base64'),
    name: 'Мой фильм',
  });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ name: 'Мой фильм', infohashes: hashesOf(built) });
  expect((await emulatorTorrents()).find((t) => t.infohash_v2 === built.v2)).toMatchObject({ name: 'Мой фильм' });
});

it('the same file sent 8 times at once: one download (one 201, the others 200 with its id), one torrent', async () => {
  const built = buildTorrent('hybrid');
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      i % 2 ? upload(built.file) : call('POST', '/downloads', { torrent_base64: built.file.toString('base64') }),
    ),
  );
  expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
  expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
  await assertOneActivePerHash(aws, table, [built.v1!, built.v2!]);
  expect((await emulatorTorrents()).filter((t) => t.infohash_v2 === built.v2)).toHaveLength(1);
});

it('a magnet first, then its .torrent: the magnet’s active download (200)', async () => {
  const built = buildTorrent('v1');
  const magnet = await call('POST', '/downloads', { magnet: `magnet:?xt=urn:btih:${built.v1}&dn=first` });
  expect(magnet.status).toBe(201);
  const file = await upload(built.file);
  expect(file).toMatchObject({ status: 200, body: { id: magnet.body.id } });
});

describe('hostile files: 400 with the reason, nothing written (DynamoDB and the client unchanged)', () => {
  const v1 = buildTorrent('v1');
  const v2 = buildTorrent('v2');
  const [[rootHash, layer]] = [...(v2.top['piece layers'] as Map<Buffer, Buffer>)];
  const badLayer = Buffer.from(layer);
  badLayer[5] ^= 1;
  const cases: Array<[string, Buffer, RegExp]> = [
    ['not bencode', Buffer.from('<html>this is a web page</html>'), /not bencode/],
    [
      'a 200 MB string length in a 2 KB file',
      Buffer.concat([Buffer.from('d4:info209715200:'), Buffer.alloc(2000, 97), Buffer.from('e')]),
      /past the end of the file/,
    ],
    ['nested past the bound', Buffer.from(`d4:info${'l'.repeat(5000)}${'e'.repeat(5000)}e`), /nested deeper than 64/],
    ['no info', bencode({ announce: 'http://tracker.example.org/a' }), /no info dictionary/],
    ['info not a dictionary', bencode({ info: [1, 2] }), /info must be a dictionary/],
    ['a name with ../', buildTorrent('v1', { name: '../../etc/cron.d/x' }).file, /path separator/],
    [
      'a v2 tree that does not hash to its root',
      finish(v2.info, { 'piece layers': new Map([[rootHash, badLayer]]) }).file,
      /does not hash to its pieces root/,
    ],
    [
      'a duplicate key',
      Buffer.concat([
        Buffer.from('d4:info'),
        bencode(v1.info),
        Buffer.from('4:info'),
        bencode(v1.info),
        Buffer.from('e'),
      ]),
      /duplicate dictionary key/,
    ],
    // The stack allows private addresses (its closed swarm): the internal-host refusal is the unit test's.
    [
      'a tracker that is not http, https or udp',
      finish(v1.info, { announce: 'file:///etc/passwd' }).file,
      /URL with a host/,
    ],
  ];

  it.each(cases)('%s', async (_what, file, message) => {
    const [itemsBefore, torrentsBefore] = [await tableItems(), (await emulatorTorrents()).length];
    for (const answer of [
      await upload(file),
      await call('POST', '/downloads', { torrent_base64: file.toString('base64') }),
    ]) {
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('INVALID_TORRENT');
      expect(answer.body.error.message).toMatch(message);
    }
    expect(await tableItems()).toBe(itemsBefore);
    expect((await emulatorTorrents()).length).toBe(torrentsBefore);
  });

  it('over the bound: a file over 10 MiB is 413 (the body) or 400 (the file), never stored', async () => {
    const big = Buffer.concat([Buffer.from('d4:info10485800:'), Buffer.alloc(10_485_800, 97), Buffer.from('e')]);
    const itemsBefore = await tableItems();
    const answer = await upload(big);
    expect([400, 413]).toContain(answer.status);
    expect(await tableItems()).toBe(itemsBefore);
  });

  it('malformed requests around the file: bad base64, an unknown part, no file part', async () => {
    const bad = await call('POST', '/downloads', { torrent_base64: 'not base64!' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/torrent_base64/);
    const form = new FormData();
    form.append('magnet', 'magnet:?xt=urn:btih:' + 'a'.repeat(40));
    const res = await fetch(httpUrl('/downloads'), { method: 'POST', headers: bearer(), body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/unknown form part "magnet"/);
    const extra = await upload(v1.file, { category: 'x' });
    expect(extra.status).toBe(400);
    // A magnet body keeps the 64 KiB bound: only a torrent_base64 body may be larger.
    const long = await call('POST', '/downloads', { magnet: 'magnet:?' + 'x'.repeat(70_000) });
    expect(long.status).toBe(413);
  });
});
