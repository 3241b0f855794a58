import { torrentHashes } from '../../../lib/downloads/torrent-hashes';
import { mapClientState } from '../../../lib/downloads/torrent-states';

const V1 = 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a';
const V2 = 'd8dd32ac93357c368556af3ac1d95c9d76bd0dff6fa9833ecdac3d53134efabb';

describe('torrentHashes', () => {
  it('v1-only: the v1 hash', () => {
    expect(torrentHashes({ hash: V1, infohash_v1: V1, infohash_v2: '' })).toEqual([{ infohash: V1, kind: 'v1' }]);
  });

  it('v2-only: the full v2 hash, NEVER the truncated `hash`', () => {
    const hashes = torrentHashes({ hash: V2.slice(0, 40), infohash_v1: '', infohash_v2: V2 });
    expect(hashes).toEqual([{ infohash: V2, kind: 'v2' }]);
    expect(hashes.map((h) => h.infohash)).not.toContain(V2.slice(0, 40));
  });

  it('hybrid: both, v1 first', () => {
    expect(torrentHashes({ hash: V1, infohash_v1: V1, infohash_v2: V2 })).toEqual([
      { infohash: V1, kind: 'v1' },
      { infohash: V2, kind: 'v2' },
    ]);
  });

  it('old API (no infohash_v1/v2 fields): `hash`', () => {
    expect(torrentHashes({ hash: V1.toUpperCase() })).toEqual([{ infohash: V1, kind: 'v1' }]);
  });

  it('mid hash switch (fields present but empty): nothing, never the truncated `hash`', () => {
    expect(torrentHashes({ hash: V2.slice(0, 40), infohash_v1: '', infohash_v2: '' })).toEqual([]);
  });

  it('hybrid after its metadata: `hash` is the truncated v2, stored are v1 and the full v2', () => {
    expect(torrentHashes({ hash: V2.slice(0, 40), infohash_v1: V1, infohash_v2: V2 }).map((h) => h.infohash)).toEqual([
      V1,
      V2,
    ]);
  });

  it('drops malformed fields without dropping valid ones', () => {
    expect(torrentHashes({ hash: 'x', infohash_v1: 'nope', infohash_v2: V2 })).toEqual([{ infohash: V2, kind: 'v2' }]);
    expect(torrentHashes({ hash: '' })).toEqual([]);
  });
});

describe('mapClientState', () => {
  it.each([
    ['downloading', 'downloading'],
    ['metaDL', 'downloading'],
    ['queuedDL', 'queued'],
    ['pausedDL', 'paused'],
    ['stoppedDL', 'paused'],
    ['stalledDL', 'downloading'],
    ['error', 'stuck'],
    ['uploading', 'completed'],
    ['stalledUP', 'completed'],
  ])('%s → %s', (client, ours) => expect(mapClientState(client)).toBe(ours));

  it('knows nothing of unknown or prototype-named states', () => {
    expect(mapClientState('somethingNew')).toBeUndefined();
    expect(mapClientState('constructor')).toBeUndefined();
    expect(mapClientState('__proto__')).toBeUndefined();
  });
});
