import { createHash } from 'node:crypto';
import { internalHost, peerHost } from './addresses';
import { BencodeError, type Bdict, type Bvalue, decodeBencode, printable } from './bencode';
import { InvalidTorrentError } from './errors';
import type { Infohash } from './infohash';
import { validateName } from '../names';

/**
 * `.torrent` files (BEP 3 v1, BEP 52 v2 and hybrid) as people upload them.
 * The infohashes come from the file's own bytes: v1 = SHA-1 of the bencoded
 * `info` exactly as it is in the file (when it has `pieces`), v2 = SHA-256
 * of it (when `meta version` is 2; a hybrid has both). What the user's
 * torrent client would act on is checked before anything is written: every
 * name and path component (no traversal, no absolute path, no NUL), the v1
 * piece count against the lengths, each v2 file's piece layer against its
 * pieces root, and every host the client would dial (trackers, web seeds,
 * DHT nodes) by the magnet's rules (addresses.ts, decision 383). Any
 * refusal is an InvalidTorrentError (400 INVALID_TORRENT) naming the problem.
 */

/** Bound of an uploaded .torrent (decision 401). */
export const MAX_TORRENT_BYTES = 10 * 1024 * 1024;
/** Nesting bound: a v2 file tree nests one level per directory; real trees stay far below it. */
export const MAX_TORRENT_DEPTH = 64;
const MAX_FILES = 100_000;
const MAX_TRACKERS = 64;
/** BEP 52: 16 KiB leaf blocks; piece length a power of two of at least one block. */
const BLOCK = 16 * 1024;
/** Keys no file of ours carries: refused where an object-shaped reader would put them on a prototype. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export interface TorrentFile {
  /** Sorted v1 before v2, as everywhere (infohash.ts). */
  infohashes: Infohash[];
  name: string;
  /** http(s)/udp announce URLs of `announce` and `announce-list`, in file order, deduplicated. */
  trackers: string[];
  /** Sum of the file lengths. */
  totalLength: number;
  /** The file as uploaded: what the torrent client gets. */
  bytes: Buffer;
}

export interface TorrentFileOptions {
  /** As MagnetOptions.allowPrivateAddresses (MAGNET_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivateAddresses?: boolean;
}

export function parseTorrentFile(input: Uint8Array, options: TorrentFileOptions = {}): TorrentFile {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (bytes.length === 0) throw new InvalidTorrentError('the .torrent file is empty');
  if (bytes.length > MAX_TORRENT_BYTES)
    throw new InvalidTorrentError(`the .torrent file is larger than ${MAX_TORRENT_BYTES} bytes`, {
      limit: MAX_TORRENT_BYTES,
    });
  let top: Bvalue;
  try {
    top = decodeBencode(bytes, { maxDepth: MAX_TORRENT_DEPTH });
  } catch (err) {
    if (err instanceof BencodeError) throw new InvalidTorrentError(`not a valid .torrent file: ${err.message}`);
    throw err;
  }
  const root = dict(top, 'the file');
  refusePrototypeKeys(top);
  const info = root.value.get('info');
  if (!info) throw new InvalidTorrentError('the .torrent has no info dictionary');
  const infoDict = dict(info, 'info');
  // The infohash is of these exact bytes; a client that re-encodes a dictionary sorts its keys, so an unsorted
  // info would be one torrent to us and another to it.
  refuseUnsorted(infoDict, 'info');

  const name = torrentName(infoDict);
  const pieceLength = int(required(infoDict, 'piece length', 'info'), 'info.piece length');
  if (pieceLength <= 0) throw new InvalidTorrentError('info.piece length must be positive');
  const metaVersion = infoDict.value.get('meta version');
  if (metaVersion !== undefined && int(metaVersion, 'info.meta version') !== 2)
    throw new InvalidTorrentError('info.meta version must be 2 (BEP 52) when present');
  const isV2 = metaVersion !== undefined;
  const isV1 = infoDict.value.has('pieces');
  if (!isV1 && !isV2) throw new InvalidTorrentError('info has neither pieces (v1) nor meta version 2 (v2)');

  let totalLength = 0;
  let padLength = 0;
  if (isV1) ({ total: totalLength, pad: padLength } = checkV1(infoDict, pieceLength));
  if (isV2) {
    const v2Length = checkV2(infoDict, root, pieceLength);
    // A hybrid describes one content twice: both descriptions must agree on it.
    if (isV1 && v2Length !== totalLength - padLength)
      throw new InvalidTorrentError(
        `hybrid torrent: v1 files total ${totalLength - padLength} bytes, v2 file tree ${v2Length}`,
      );
    totalLength = v2Length;
  }

  const raw = bytes.subarray(infoDict.start, infoDict.end);
  const infohashes: Infohash[] = [];
  if (!isV2) totalLength -= padLength;
  if (isV1) infohashes.push({ infohash: createHash('sha1').update(raw).digest('hex'), kind: 'v1' });
  if (isV2) infohashes.push({ infohash: createHash('sha256').update(raw).digest('hex'), kind: 'v2' });
  const trackers = announceUrls(root, options);
  checkDialedHosts(root, options);
  return { infohashes, name, trackers, totalLength, bytes };
}

/** The v1 files' total (pad files included: pieces cover them) and the pad files' share of it. */
function checkV1(info: Bdict, pieceLength: number): { total: number; pad: number } {
  const pieces = bytesOf(required(info, 'pieces', 'info'), 'info.pieces');
  if (pieces.length % 20 !== 0) throw new InvalidTorrentError('info.pieces is not a list of 20-byte SHA-1 hashes');
  const length = info.value.get('length');
  const files = info.value.get('files');
  if ((length === undefined) === (files === undefined))
    throw new InvalidTorrentError('info must have exactly one of length (one file) and files (several)');
  let total = 0;
  let pad = 0;
  if (length !== undefined) {
    total = nonNegative(length, 'info.length');
  } else {
    const list = listOf(files!, 'info.files');
    if (list.length === 0) throw new InvalidTorrentError('info.files is empty');
    if (list.length > MAX_FILES) throw new InvalidTorrentError(`info.files has more than ${MAX_FILES} files`);
    for (const [i, entry] of list.entries()) {
      const file = dict(entry, `info.files[${i}]`);
      const fileLength = nonNegative(required(file, 'length', `info.files[${i}]`), `info.files[${i}].length`);
      total = add(total, fileLength);
      const path = listOf(required(file, 'path', `info.files[${i}]`), `info.files[${i}].path`);
      if (path.length === 0) throw new InvalidTorrentError(`info.files[${i}].path is empty`);
      // BEP 47 pad files (attr "p", a hybrid's `.pad/<n>`): aligned space the client never writes; named by the tool.
      const attr = file.value.get('attr');
      const isPad = attr?.kind === 'bytes' && attr.value.includes(0x70);
      if (isPad) pad += fileLength;
      for (const part of path) {
        const name = text(part, `info.files[${i}].path`);
        if (isPad && name === '.pad') continue;
        pathComponent(name, `info.files[${i}].path`);
      }
    }
  }
  const expected = Math.ceil(total / pieceLength);
  if (pieces.length / 20 !== expected)
    throw new InvalidTorrentError(
      `info.pieces holds ${pieces.length / 20} hashes; ${total} bytes in pieces of ${pieceLength} need ${expected}`,
    );
  return { total, pad };
}

/** BEP 52: the file tree, and each file's piece layer (outside info) against its pieces root. */
function checkV2(info: Bdict, root: Bdict, pieceLength: number): number {
  if (pieceLength < BLOCK || (pieceLength & (pieceLength - 1)) !== 0)
    throw new InvalidTorrentError('info.piece length of a v2 torrent must be a power of two of at least 16 KiB');
  const tree = dict(required(info, 'file tree', 'info'), 'info.file tree');
  const layersValue = root.value.get('piece layers');
  const layers = layersValue ? dict(layersValue, 'piece layers') : undefined;
  const used = new Set<string>();
  let total = 0;
  let files = 0;
  const walk = (node: Bdict, where: string): void => {
    if (node.value.size === 0) throw new InvalidTorrentError(`${where}: an empty directory`);
    for (const [key, child] of node.value) {
      const childDict = dict(child, `${where}`);
      if (key === '') {
        // A file: { "": { length, pieces root } }, and nothing beside it.
        if (node.value.size !== 1) throw new InvalidTorrentError(`${where}: a file entry with siblings`);
        if (++files > MAX_FILES) throw new InvalidTorrentError(`info.file tree has more than ${MAX_FILES} files`);
        const length = nonNegative(required(childDict, 'length', where), `${where}.length`);
        total = add(total, length);
        if (length === 0) continue;
        const rootHash = bytesOf(required(childDict, 'pieces root', where), `${where}.pieces root`);
        if (rootHash.length !== 32) throw new InvalidTorrentError(`${where}: pieces root is not 32 bytes`);
        if (length <= pieceLength) continue; // one piece: its root is the piece's own hash, no layer
        const rootKey = rootHash.toString('latin1');
        const layer = layers?.value.get(rootKey);
        if (!layer) throw new InvalidTorrentError(`${where}: no piece layer for its pieces root`);
        const hashes = bytesOf(layer, 'piece layers');
        const pieces = Math.ceil(length / pieceLength);
        if (hashes.length !== pieces * 32)
          throw new InvalidTorrentError(`${where}: its piece layer holds ${hashes.length / 32} hashes, not ${pieces}`);
        if (!merkleRoot(hashes, pieceLength).equals(rootHash))
          throw new InvalidTorrentError(`${where}: its piece layer does not hash to its pieces root`);
        used.add(rootKey);
        continue;
      }
      pathComponent(key, where);
      walk(childDict, `${where}/${printable(key)}`);
    }
  };
  walk(tree, 'info.file tree');
  if (files === 0) throw new InvalidTorrentError('info.file tree has no file');
  for (const key of layers?.value.keys() ?? [])
    if (!used.has(key)) throw new InvalidTorrentError('piece layers names a pieces root no file of the tree has');
  return total;
}

/**
 * The root of a file's merkle tree from its piece layer (BEP 52): the layer padded to a power of two with the
 * root of a piece-sized subtree of zero leaves (a zero leaf is 32 zero bytes), then hashed pairwise to the top.
 */
function merkleRoot(layer: Buffer, pieceLength: number): Buffer {
  let pad: Buffer = Buffer.alloc(32);
  for (let blocks = pieceLength / BLOCK; blocks > 1; blocks /= 2) pad = sha256(pad, pad);
  let level: Buffer[] = [];
  for (let i = 0; i < layer.length; i += 32) level.push(layer.subarray(i, i + 32));
  let width = 1;
  while (width < level.length) width *= 2;
  while (level.length < width) level.push(pad);
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha256(level[i], level[i + 1]));
    level = next;
  }
  return level[0];
}

const sha256 = (a: Buffer, b: Buffer): Buffer => createHash('sha256').update(a).update(b).digest();

function torrentName(info: Bdict): string {
  const raw = info.value.get('name.utf-8') ?? required(info, 'name', 'info');
  const name = text(raw, 'info.name');
  pathComponent(name, 'info.name');
  return name;
}

/** A file or directory name the client will create: one safe component (lib/names), never `..` or a path. */
function pathComponent(name: string, where: string): void {
  if (name === '..' || name === '.') throw new InvalidTorrentError(`${where}: "${name}" would leave its directory`);
  try {
    validateName(name);
  } catch (err) {
    throw new InvalidTorrentError(`${where}: ${printable(name)}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function announceUrls(root: Bdict, options: TorrentFileOptions): string[] {
  const found: string[] = [];
  const announce = root.value.get('announce');
  if (announce) found.push(text(announce, 'announce'));
  const tiers = root.value.get('announce-list');
  if (tiers)
    for (const tier of listOf(tiers, 'announce-list'))
      for (const url of listOf(tier, 'announce-list')) found.push(text(url, 'announce-list'));
  const unique = [...new Set(found)];
  if (unique.length > MAX_TRACKERS)
    throw new InvalidTorrentError(`the torrent names more than ${MAX_TRACKERS} trackers`);
  for (const url of unique) dialedUrl(url, 'tracker', ['http:', 'https:', 'udp:'], options);
  return unique;
}

/** Web seeds (BEP 19 url-list, BEP 17 httpseeds) and DHT nodes: the client dials them too. */
function checkDialedHosts(root: Bdict, options: TorrentFileOptions): void {
  for (const key of ['url-list', 'httpseeds']) {
    const value = root.value.get(key);
    if (!value) continue;
    const urls = value.kind === 'list' ? value.value : [value];
    if (urls.length > MAX_TRACKERS) throw new InvalidTorrentError(`${key} names more than ${MAX_TRACKERS} URLs`);
    for (const url of urls) dialedUrl(text(url, key), 'web seed', ['http:', 'https:'], options);
  }
  const nodes = root.value.get('nodes');
  if (nodes) {
    const list = listOf(nodes, 'nodes');
    if (list.length > MAX_TRACKERS) throw new InvalidTorrentError(`nodes names more than ${MAX_TRACKERS} nodes`);
    for (const node of list) {
      const [host] = listOf(node, 'nodes');
      if (!host) throw new InvalidTorrentError('a DHT node without a host');
      if (!options.allowPrivateAddresses) refuseInternal('DHT node', text(host, 'nodes'));
    }
  }
}

function dialedUrl(value: string, what: string, schemes: string[], options: TorrentFileOptions): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidTorrentError(`the torrent's ${what} ${JSON.stringify(printable(value))} is not a URL`);
  }
  // WebTorrent's ws(s) trackers: useless to qBittorrent, harmless; left to the client to ignore.
  if (what === 'tracker' && (url.protocol === 'ws:' || url.protocol === 'wss:')) return;
  if (!schemes.includes(url.protocol) || url.hostname === '')
    throw new InvalidTorrentError(
      `the torrent's ${what} must be an ${schemes.map((s) => s.slice(0, -1)).join(', ')} URL with a host`,
    );
  if (!options.allowPrivateAddresses) refuseInternal(what, peerHost(url.host));
}

function refuseInternal(what: string, host: string): void {
  const why = internalHost(host);
  if (why)
    throw new InvalidTorrentError(
      `the torrent's ${what} names an internal host: ${why}; refused unless MAGNET_ALLOW_PRIVATE_ADDRESSES=true`,
    );
}

function refusePrototypeKeys(value: Bvalue): void {
  const stack: Bvalue[] = [value];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.kind === 'list') stack.push(...node.value);
    if (node.kind !== 'dict') continue;
    for (const [key, child] of node.value) {
      if (PROTOTYPE_KEYS.has(key)) throw new InvalidTorrentError(`the torrent has a dictionary key "${key}"`);
      stack.push(child);
    }
  }
}

function refuseUnsorted(value: Bvalue, where: string): void {
  const stack: Bvalue[] = [value];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.kind === 'list') stack.push(...node.value);
    if (node.kind !== 'dict') continue;
    if (!node.sorted)
      throw new InvalidTorrentError(`${where}: dictionary keys are not in sorted order (not canonical)`);
    stack.push(...node.value.values());
  }
}

function required(d: Bdict, key: string, where: string): Bvalue {
  const v = d.value.get(key);
  if (v === undefined) throw new InvalidTorrentError(`${where} has no "${key}"`);
  return v;
}

function dict(v: Bvalue, where: string): Bdict {
  if (v.kind !== 'dict') throw new InvalidTorrentError(`${where} must be a dictionary`);
  return v;
}

function listOf(v: Bvalue, where: string): Bvalue[] {
  if (v.kind !== 'list') throw new InvalidTorrentError(`${where} must be a list`);
  return v.value;
}

function bytesOf(v: Bvalue, where: string): Buffer {
  if (v.kind !== 'bytes') throw new InvalidTorrentError(`${where} must be a string`);
  return v.value;
}

function int(v: Bvalue, where: string): number {
  if (v.kind !== 'int') throw new InvalidTorrentError(`${where} must be an integer`);
  return v.value;
}

function nonNegative(v: Bvalue, where: string): number {
  const n = int(v, where);
  if (n < 0) throw new InvalidTorrentError(`${where} must not be negative`);
  return n;
}

function add(a: number, b: number): number {
  const sum = a + b;
  if (!Number.isSafeInteger(sum)) throw new InvalidTorrentError('the files total more than 2^53 bytes');
  return sum;
}

/** A UTF-8 string (names, URLs): invalid UTF-8 is refused rather than replaced. */
function text(v: Bvalue, where: string): string {
  const raw = bytesOf(v, where);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new InvalidTorrentError(`${where} is not valid UTF-8`);
  }
}
