import { Infohash, parseInfohash, sortHashes } from '../downloads/infohash';
import type { TorrentInfo } from './client';

/**
 * The hashes of a torrent as the client reports them (DESIGN §3): take
 * infohash_v1 / infohash_v2 when present; take `hash` ONLY when both are empty
 * (an old API). For a v2-only torrent `hash` is the v2 hash truncated to 40
 * hex — it looks like a v1 hash and would be a lie if stored.
 */
export function torrentHashes(t: Pick<TorrentInfo, 'hash' | 'infohash_v1' | 'infohash_v2'>): Infohash[] {
  const reported = [t.infohash_v1, t.infohash_v2].filter((h): h is string => typeof h === 'string' && h.length > 0);
  const candidates = reported.length > 0 ? reported : t.hash ? [t.hash] : [];
  const hashes: Infohash[] = [];
  for (const candidate of candidates) {
    try {
      hashes.push(parseInfohash(candidate));
    } catch {
      // A client answering garbage for one field must not poison the others.
    }
  }
  return sortHashes(hashes);
}
