import { InvalidInfohashError, InvalidMagnetError } from './errors';
import { Infohash, parseInfohash, sortHashes } from './infohash';

/**
 * Magnet links (BEP 9, BEP 52): `xt=urn:btih:` carries the v1 hash (40 hex or
 * 32 base32), `xt=urn:btmh:1220…` the v2 hash as a sha2-256 multihash; a
 * hybrid link carries both. `dn` is the display name, `tr` the trackers.
 */

export interface Magnet {
  infohashes: Infohash[];
  name?: string;
  trackers: string[];
}

export const MAX_MAGNET_LENGTH = 16 * 1024;
const MAX_TRACKERS = 64;
const MAX_NAME_LENGTH = 1024;
const SHA256_MULTIHASH_PREFIX = '1220';

export function parseMagnet(uri: unknown): Magnet {
  if (typeof uri !== 'string') throw new InvalidMagnetError('magnet must be a string');
  if (uri.length > MAX_MAGNET_LENGTH)
    throw new InvalidMagnetError(`magnet is longer than ${MAX_MAGNET_LENGTH} characters`);
  if (!/^magnet:\?/i.test(uri)) throw new InvalidMagnetError('magnet must start with "magnet:?"');

  const hashes: Infohash[] = [];
  const trackers: string[] = [];
  let name: string | undefined;
  for (const pair of uri.slice('magnet:?'.length).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = (eq < 0 ? pair : pair.slice(0, eq)).toLowerCase();
    const value = decode(eq < 0 ? '' : pair.slice(eq + 1), key);
    if (key === 'xt' || /^xt\.\d+$/.test(key)) {
      const hash = exactTopic(value);
      if (hash) hashes.push(hash);
    } else if (key === 'dn') {
      name = value.slice(0, MAX_NAME_LENGTH);
    } else if (key === 'tr' || /^tr\.\d+$/.test(key)) {
      if (trackers.length >= MAX_TRACKERS)
        throw new InvalidMagnetError(`magnet has more than ${MAX_TRACKERS} trackers`);
      trackers.push(value);
    }
  }

  const infohashes = sortHashes(hashes);
  if (infohashes.length === 0)
    throw new InvalidMagnetError('magnet has no BitTorrent exact topic (xt=urn:btih: or xt=urn:btmh:)');
  for (const kind of ['v1', 'v2'] as const) {
    if (infohashes.filter((h) => h.kind === kind).length > 1) {
      throw new InvalidMagnetError(`magnet names more than one ${kind} infohash: one magnet is one torrent`);
    }
  }
  return { infohashes, name: name?.trim() || undefined, trackers };
}

/** Builds the magnet a torrent client is given on retry. */
export function formatMagnet(infohashes: Infohash[], name?: string, trackers: string[] = []): string {
  const parts = sortHashes(infohashes).map((h) =>
    h.kind === 'v1' ? `xt=urn:btih:${h.infohash}` : `xt=urn:btmh:${SHA256_MULTIHASH_PREFIX}${h.infohash}`,
  );
  if (name) parts.push(`dn=${encodeURIComponent(name)}`);
  for (const tr of trackers) parts.push(`tr=${encodeURIComponent(tr)}`);
  return `magnet:?${parts.join('&')}`;
}

function exactTopic(value: string): Infohash | undefined {
  const urn = value.toLowerCase();
  try {
    if (urn.startsWith('urn:btih:')) {
      const hash = parseInfohash(value.slice('urn:btih:'.length));
      if (hash.kind !== 'v1') throw new InvalidMagnetError('urn:btih: must carry a v1 infohash (40 hex or 32 base32)');
      return hash;
    }
    if (urn.startsWith('urn:btmh:')) {
      const multihash = urn.slice('urn:btmh:'.length);
      if (!multihash.startsWith(SHA256_MULTIHASH_PREFIX) || multihash.length !== SHA256_MULTIHASH_PREFIX.length + 64) {
        throw new InvalidMagnetError('urn:btmh: must be a sha2-256 multihash: "1220" followed by 64 hex');
      }
      return parseInfohash(multihash.slice(SHA256_MULTIHASH_PREFIX.length));
    }
  } catch (err) {
    if (err instanceof InvalidInfohashError) throw new InvalidMagnetError(err.message);
    throw err;
  }
  return undefined; // another network's URN (ed2k, sha1...): not ours to judge
}

function decode(value: string, key: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new InvalidMagnetError(`magnet parameter ${key.slice(0, 20)} is not valid percent-encoding`);
  }
}
