import { Infohash, parseInfohash, sortHashes } from './infohash';
import type { TorrentInfo } from '../torrents/model';

/**
 * The hashes of a torrent as the client reports them: infohash_v1 /
 * infohash_v2 when the client has those fields; `hash` ONLY when it has
 * neither field (an old API). `hash` is the torrent's id: for a v2-only
 * torrent, and for a hybrid once its metadata is known, it is the v2 hash
 * truncated to 40 hex — it looks like a v1 hash and would be a lie if stored.
 * A field present but empty is "not known yet" (a hybrid before its
 * metadata), never a reason to fall back to `hash`.
 */
export function torrentHashes(t: Pick<TorrentInfo, 'hash' | 'infohash_v1' | 'infohash_v2'>): Infohash[] {
  const oldApi = t.infohash_v1 === undefined && t.infohash_v2 === undefined;
  const candidates = oldApi ? [t.hash] : [t.infohash_v1, t.infohash_v2];
  const hashes: Infohash[] = [];
  for (const candidate of candidates) {
    if (typeof candidate !== 'string' || candidate.length === 0) continue;
    try {
      hashes.push(parseInfohash(candidate));
    } catch {
      // A client answering garbage for one field must not poison the others.
    }
  }
  return sortHashes(hashes);
}
