import { internalHost, peerHost } from './addresses';
import { InvalidInfohashError, InvalidMagnetError } from './errors';
import { Infohash, parseInfohash, sortHashes } from './infohash';

/**
 * Magnet links (BEP 9, BEP 52): `xt=urn:btih:` carries the v1 hash (40 hex or
 * 32 base32), `xt=urn:btmh:1220…` the v2 hash as a sha2-256 multihash; a
 * hybrid link carries both. `dn` is the display name, `tr` the trackers.
 *
 * A magnet reaches the torrent client only as `clientMagnet` rebuilds it from
 * these fields, never as the caller wrote it: qBittorrent splits its `urls`
 * field on newlines, so a raw `…&x.pe=\nhttp://169.254.169.254/…` would make
 * the user's client fetch any URL inside their network (decision 290).
 */

export interface Magnet {
  infohashes: Infohash[];
  name?: string;
  trackers: string[];
  /** Peer addresses (`x.pe`, BEP 9): `host:port`, how a closed swarm (the local stack's) finds its seeder. */
  peers?: string[];
}

export const MAX_MAGNET_LENGTH = 16 * 1024;
const MAX_TRACKERS = 64;
const MAX_NAME_LENGTH = 1024;
const SHA256_MULTIHASH_PREFIX = '1220';
/** C0, DEL and C1: never part of a link a person pasted, and a line break splits qBittorrent's `urls`. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** The tracker schemes a torrent client announces to (BEP 3, BEP 15). */
const TRACKER_SCHEMES = new Set(['http:', 'https:', 'udp:']);
/** A peer address: a host name or IPv4 address, or a bracketed IPv6 one, and a port. */
const PEER = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\]):\d{1,5}$/;
/** WebTorrent's trackers: well-formed, useless to qBittorrent, dropped rather than refused (decision 290). */
const DROPPED_TRACKER_SCHEMES = new Set(['ws:', 'wss:']);

export interface MagnetOptions {
  /**
   * Trackers and peers may name internal or loopback hosts (MAGNET_ALLOW_PRIVATE_ADDRESSES=true: the local
   * stack's closed swarm, a private tracker on the user's own network). Off by default: lib/downloads/addresses.ts.
   */
  allowPrivateAddresses?: boolean;
}

export function parseMagnet(uri: unknown, options: MagnetOptions = {}): Magnet {
  if (typeof uri !== 'string') throw new InvalidMagnetError('magnet must be a string');
  if (uri.length > MAX_MAGNET_LENGTH)
    throw new InvalidMagnetError(`magnet is longer than ${MAX_MAGNET_LENGTH} characters`);
  if (!/^magnet:\?/i.test(uri)) throw new InvalidMagnetError('magnet must start with "magnet:?"');
  if (CONTROL.test(uri)) throw new InvalidMagnetError('magnet contains a control character');

  const hashes: Infohash[] = [];
  const trackers: string[] = [];
  const peers: string[] = [];
  let name: string | undefined;
  for (const pair of uri.slice('magnet:?'.length).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = (eq < 0 ? pair : pair.slice(0, eq)).toLowerCase();
    const value = decode(eq < 0 ? '' : pair.slice(eq + 1), key);
    if (CONTROL.test(value))
      throw new InvalidMagnetError(`magnet parameter ${safeKey(key)} contains a control character`);
    if (key === 'xt' || /^xt\.\d+$/.test(key)) {
      const hash = exactTopic(value);
      if (hash) hashes.push(hash);
    } else if (key === 'dn') {
      name = value.slice(0, MAX_NAME_LENGTH);
    } else if (key === 'tr' || /^tr\.\d+$/.test(key)) {
      if (trackers.length >= MAX_TRACKERS)
        throw new InvalidMagnetError(`magnet has more than ${MAX_TRACKERS} trackers`);
      const tracker = trackerUrl(value);
      if (tracker && !options.allowPrivateAddresses) refuseInternal('tracker', peerHost(new URL(tracker).host));
      if (tracker) trackers.push(tracker);
    } else if (key === 'x.pe') {
      if (!PEER.test(value) || Number(value.slice(value.lastIndexOf(':') + 1)) > 65535)
        throw new InvalidMagnetError('magnet peer address (x.pe) must be host:port');
      if (peers.length >= MAX_TRACKERS) throw new InvalidMagnetError(`magnet has more than ${MAX_TRACKERS} peers`);
      if (!options.allowPrivateAddresses) refuseInternal('peer address (x.pe)', peerHost(value));
      peers.push(value);
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
  return { infohashes, name: name?.trim() || undefined, trackers, ...(peers.length ? { peers } : {}) };
}

/** The only magnet a torrent client is given: rebuilt from the parsed fields. */
export function clientMagnet(magnet: Magnet): string {
  return formatMagnet(magnet.infohashes, magnet.name, magnet.trackers, magnet.peers);
}

/** Builds a magnet from its fields (each one percent-encoded: nothing of a value can become a separator). */
export function formatMagnet(
  infohashes: Infohash[],
  name?: string,
  trackers: string[] = [],
  peers: string[] = [],
): string {
  const parts = sortHashes(infohashes).map((h) =>
    h.kind === 'v1' ? `xt=urn:btih:${h.infohash}` : `xt=urn:btmh:${SHA256_MULTIHASH_PREFIX}${h.infohash}`,
  );
  if (name) parts.push(`dn=${encodeURIComponent(name)}`);
  for (const tr of trackers) parts.push(`tr=${encodeURIComponent(tr)}`);
  // Raw: PEER allows only a host, brackets, ':' and digits, nothing that separates; libtorrent reads x.pe
  // without percent-decoding (libtorrent 2.0 parse_magnet_uri: `x.pe=127.0.0.1%3A6881` yields no peer at all).
  for (const pe of peers) parts.push(`x.pe=${pe}`);
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

/** An http(s) or udp tracker with a host, kept as written; ws(s) dropped; anything else refused. */
function trackerUrl(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidMagnetError('magnet tracker is not a URL');
  }
  if (DROPPED_TRACKER_SCHEMES.has(url.protocol)) return undefined;
  if (!TRACKER_SCHEMES.has(url.protocol) || url.hostname === '')
    throw new InvalidMagnetError('magnet tracker must be an http, https or udp URL with a host');
  return value;
}

function refuseInternal(what: string, host: string): void {
  const why = internalHost(host);
  if (why)
    throw new InvalidMagnetError(
      `magnet ${what} names an internal host: ${why}; refused unless MAGNET_ALLOW_PRIVATE_ADDRESSES=true`,
    );
}

function decode(value: string, key: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new InvalidMagnetError(`magnet parameter ${safeKey(key)} is not valid percent-encoding`);
  }
}

function safeKey(key: string): string {
  return key.slice(0, 20).replace(new RegExp(CONTROL.source, 'g'), '?');
}
