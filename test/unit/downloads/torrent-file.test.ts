import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InvalidTorrentError } from '../../../lib/downloads/errors';
import { MAX_TORRENT_BYTES, parseTorrentFile } from '../../../lib/downloads/torrent-file';
import { bencode, buildTorrent, finish } from '../../support/torrent-build';

/** .torrent files: the hashes of the file's own info bytes, and a typed 400 for every hostile file. */

const refused = (file: Buffer | Uint8Array, message: RegExp, options = {}) => {
  let err: unknown;
  try {
    parseTorrentFile(file, options);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(InvalidTorrentError);
  expect((err as Error).message).toMatch(message);
};

describe('well-formed files', () => {
  it.each(['v1', 'v2', 'hybrid'] as const)('a %s torrent: its hashes are those of its info bytes', (kind) => {
    const built = buildTorrent(kind, {
      name: 'Sintel.mkv',
      extraTop: { announce: 'udp://tracker.example.org:1337/announce' },
    });
    const parsed = parseTorrentFile(built.file);
    expect(parsed.infohashes).toEqual([
      ...(built.v1 ? [{ infohash: built.v1, kind: 'v1' }] : []),
      ...(built.v2 ? [{ infohash: built.v2, kind: 'v2' }] : []),
    ]);
    expect(parsed.name).toBe('Sintel.mkv');
    expect(parsed.trackers).toEqual(['udp://tracker.example.org:1337/announce']);
    expect(parsed.totalLength).toBe(3 * 16384 + 1000);
    expect(parsed.bytes.equals(built.file)).toBe(true);
  });

  it('hashes the exact bytes in the file, not a re-encoding (keys outside info may be unsorted)', () => {
    const built = buildTorrent('v1');
    const info = bencode(built.info);
    // An unsorted top level: `info` before `announce`, as some old tools write it.
    const file = Buffer.concat([Buffer.from('d4:info'), info, Buffer.from('8:announce23:http://tr.example.org/ae')]);
    expect(parseTorrentFile(file).infohashes[0].infohash).toBe(createHash('sha1').update(info).digest('hex'));
  });

  it('a multi-file v1 torrent with a hybrid tool’s pad files', () => {
    const piece = 16384;
    const a = Buffer.alloc(1000, 1);
    const pad = Buffer.alloc(piece - 1000);
    const b = Buffer.alloc(piece, 2);
    const all = Buffer.concat([a, pad, b]);
    const pieces = [0, 1].map((i) =>
      createHash('sha1')
        .update(all.subarray(i * piece, (i + 1) * piece))
        .digest(),
    );
    const built = finish({
      name: 'dir',
      'piece length': piece,
      pieces: Buffer.concat(pieces),
      files: [
        { length: 1000, path: ['a.bin'] },
        { attr: 'p', length: pad.length, path: ['.pad', String(pad.length)] },
        { length: piece, path: ['sub', 'b.bin'] },
      ],
    });
    expect(parseTorrentFile(built.file).totalLength).toBe(1000 + piece);
  });
});

describe("files libtorrent made (./torrents): our hashes are libtorrent's", () => {
  it.each([
    ['one.bin.v1.torrent', 'b1cfe0749934f9af56d7375c3c66c30c03cd01bd', undefined, 3_000_000],
    ['one.bin.v2.torrent', undefined, '4a539d6575b4e323b73f437b4869768b29c81fe6e611cb1b9197d5b68f5052af', 3_000_000],
    [
      'one.bin.hybrid.torrent',
      '6db47c75f044d565b8fb2a396044bcac260ac70b',
      '7b495b2123b609ef2982bcf2178b96acbf3cadce33e723113fd367b53f4b7fd1',
      3_000_000,
    ],
    ['dir.v1.torrent', 'c6184d390af631fefe6a63ebc7c8e92a3404aac4', undefined, 970_100],
    ['dir.v2.torrent', undefined, '2622d1aafcc0c2fb24efa84e6ef56e31437c4a1e52d2f8cc8c15f094953c4bde', 970_100],
    [
      'dir.hybrid.torrent',
      'fd92b2f1031bb8d7b51b3f9c5671569245fa6a72',
      '499133e2fcb61905b108b7f7fa503fe136fa343748917aacf85da990d3073bec',
      970_100,
    ],
  ])('%s', (file, v1, v2, total) => {
    const parsed = parseTorrentFile(fs.readFileSync(path.join(__dirname, 'torrents', file)));
    expect(parsed.infohashes).toEqual([
      ...(v1 ? [{ infohash: v1, kind: 'v1' }] : []),
      ...(v2 ? [{ infohash: v2, kind: 'v2' }] : []),
    ]);
    expect(parsed.totalLength).toBe(total);
    expect(parsed.trackers).toEqual(['udp://tracker.example.org:1337/announce']);
  });

  it('a real v2 file whose piece layer is altered by one bit is refused', () => {
    const file = fs.readFileSync(path.join(__dirname, 'torrents', 'one.bin.v2.torrent'));
    const at = file.indexOf('12:piece layers') + 60;
    const bad = Buffer.from(file);
    bad[at] ^= 1;
    refused(bad, /does not hash to its pieces root/);
  });
});

describe('hostile files: a clear INVALID_TORRENT', () => {
  it('larger than the bound', () => {
    refused(Buffer.alloc(MAX_TORRENT_BYTES + 1, 0x64), /larger than 10485760 bytes/);
  });
  it('empty, or not bencode at all', () => {
    refused(Buffer.alloc(0), /empty/);
    refused(Buffer.from('<html>hello</html>'), /not bencode/);
    refused(Buffer.from('d4:infod'), /unexpected end/);
  });
  it('a 200 MB string length declared in a 2 KB file: refused before anything is read', () => {
    const file = Buffer.concat([Buffer.from('d4:info209715200:'), Buffer.alloc(2000, 0x61), Buffer.from('e')]);
    refused(file, /string length 209715200 is past the end of the file/);
  });
  it('nesting past the depth bound (no stack overflow)', () => {
    refused(Buffer.from(`d4:info${'l'.repeat(100_000)}${'e'.repeat(100_000)}e`), /nested deeper than 64/);
  });
  it('non-canonical bencode: leading zeros, -0, bytes after the end', () => {
    const built = buildTorrent('v1');
    refused(Buffer.from(built.file.toString('latin1').replace(/i(\d+)e/, 'i0$1e'), 'latin1'), /leading zero/);
    refused(Buffer.from('d4:infoi-0ee'), /-0/);
    refused(Buffer.from('d4:info04:abcde'), /leading zero/);
    refused(Buffer.concat([built.file, Buffer.from('x')]), /1 bytes after the end/);
  });
  it('duplicate keys anywhere, unsorted keys inside info', () => {
    const built = buildTorrent('v1');
    const info = bencode(built.info);
    refused(
      Buffer.concat([Buffer.from('d4:info'), info, Buffer.from('4:info'), info, Buffer.from('e')]),
      /duplicate dictionary key "info"/,
    );
    const unsorted = Buffer.from(
      info.toString('latin1').replace(/^d(6:lengthi\d+e)(4:name[^]*?)(12:piece length)/, 'd$2$1$3'),
      'latin1',
    );
    expect(unsorted.equals(info)).toBe(false);
    refused(Buffer.concat([Buffer.from('d4:info'), unsorted, Buffer.from('e')]), /not in sorted order/);
  });
  it('a missing or non-dictionary info', () => {
    refused(bencode({ announce: 'http://tr.example.org/a' }), /no info dictionary/);
    refused(bencode({ info: 'not a dict' }), /info must be a dictionary/);
    refused(bencode(['info']), /the file must be a dictionary/);
    refused(bencode({ info: { name: 'x', 'piece length': 16384 } }), /neither pieces \(v1\) nor meta version 2/);
  });
  it.each([
    ['../../etc/passwd', /path separator|leave its directory/],
    ['..', /leave its directory/],
    ['/etc/passwd', /path separator/],
    ['a\0b', /NUL/],
    ['C:evil', /drive/],
    ['.hidden', /starts with a dot/],
  ])('a name with traversal or worse: %j', (name, message) => {
    refused(buildTorrent('v1', { name }).file, message);
    refused(buildTorrent('v2', { name }).file, message);
  });
  it('a v1 file path component that escapes: ["..", "x"]', () => {
    const built = buildTorrent('v1');
    const info = { ...built.info, files: [{ length: built.info.length as number, path: ['..', 'x'] }] };
    delete (info as Record<string, unknown>).length;
    refused(finish(info).file, /would leave its directory/);
  });
  it('v1 piece count inconsistent with the length', () => {
    const built = buildTorrent('v1');
    refused(finish({ ...built.info, length: (built.info.length as number) * 2 }).file, /pieces holds 4 hashes/);
  });
  it('a v2 file tree whose piece layer does not hash to its pieces root', () => {
    const built = buildTorrent('v2');
    const [[rootHash, layer]] = [...(built.top['piece layers'] as Map<Buffer, Buffer>)];
    const bad = Buffer.from(layer);
    bad[0] ^= 1;
    refused(
      finish(built.info, { 'piece layers': new Map([[rootHash, bad]]) }).file,
      /does not hash to its pieces root/,
    );
  });
  it('v2 piece layers missing, of the wrong size, or naming a root no file has', () => {
    const built = buildTorrent('hybrid');
    const [[rootHash, layer]] = [...(built.top['piece layers'] as Map<Buffer, Buffer>)];
    refused(finish(built.info, {}).file, /no piece layer/);
    refused(
      finish(built.info, { 'piece layers': new Map([[rootHash, layer.subarray(32)]]) }).file,
      /holds 3 hashes, not 4/,
    );
    refused(
      finish(built.info, {
        'piece layers': new Map([
          [rootHash, layer],
          [Buffer.alloc(32, 7), layer],
        ]),
      }).file,
      /names a pieces root no file of the tree has/,
    );
  });
  it('a hybrid whose two descriptions disagree on the content', () => {
    const built = buildTorrent('hybrid');
    const tree = built.info['file tree'] as Record<string, Record<string, Record<string, unknown>>>;
    const [name] = Object.keys(tree);
    const other = buildTorrent('v2', { name, content: Buffer.alloc(5 * 16384, 9) });
    refused(finish({ ...built.info, 'file tree': other.info['file tree'] }, other.top).file, /v1 files total/);
  });
  it('a v2 piece length that is not a power of two of at least 16 KiB', () => {
    const built = buildTorrent('v2');
    refused(finish({ ...built.info, 'piece length': 20000 }, built.top).file, /power of two/);
  });
  it('an unknown meta version', () => {
    const built = buildTorrent('v1');
    refused(finish({ ...built.info, 'meta version': 3 }).file, /meta version must be 2/);
  });
  it.each(['__proto__', 'constructor', 'prototype'])('a prototype key %j anywhere', (key) => {
    const built = buildTorrent('v1', { extraTop: { comment: { [key]: 'x' } as Record<string, string> } });
    const file =
      key === '__proto__'
        ? Buffer.from(built.file.toString('latin1').replace('7:commentde', `7:commentd9:__proto__1:xe`), 'latin1')
        : built.file;
    refused(file, new RegExp(`dictionary key "${key}"`));
  });
  it('names invalid as UTF-8', () => {
    const built = buildTorrent('v1', { name: 'abc' });
    const file = Buffer.from(built.file.toString('latin1').replace('4:name3:abc', '4:name3:a\xffc'), 'latin1');
    refused(file, /info.name is not valid UTF-8/);
  });
  it('trackers, web seeds and DHT nodes on internal hosts (unless private addresses are allowed)', () => {
    const tracker = buildTorrent('v1', { extraTop: { announce: 'http://169.254.169.254/latest/meta-data' } });
    refused(tracker.file, /tracker names an internal host/);
    expect(parseTorrentFile(tracker.file, { allowPrivateAddresses: true }).trackers).toHaveLength(1);
    refused(buildTorrent('v1', { extraTop: { 'announce-list': [['http://10.0.0.5/a']] } }).file, /internal host/);
    refused(
      buildTorrent('v1', { extraTop: { 'url-list': ['http://localhost:8080/x'] } }).file,
      /web seed names an internal host/,
    );
    refused(buildTorrent('v1', { extraTop: { nodes: [['127.0.0.1', 6881]] } }).file, /DHT node names an internal host/);
    refused(buildTorrent('v1', { extraTop: { announce: 'file:///etc/passwd' } }).file, /http, https, udp URL/);
  });
});
