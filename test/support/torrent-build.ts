import { createHash, randomBytes } from 'node:crypto';

/**
 * .torrent files built in tests: a canonical bencode encoder (keys sorted by bytes) and v1, v2 and hybrid
 * metainfo of real content, the merkle trees computed as BEP 52 says, independently of lib/downloads.
 * The real-client tests use libtorrent's own (tools/torrent); these make the hostile variants.
 */

export type Bencodable =
  number | string | Buffer | Bencodable[] | { [key: string]: Bencodable } | Map<Buffer | string, Bencodable>;

export function bencode(value: Bencodable): Buffer {
  if (typeof value === 'number') return Buffer.from(`i${value}e`);
  if (typeof value === 'string') return bencode(Buffer.from(value, 'utf8'));
  if (Buffer.isBuffer(value)) return Buffer.concat([Buffer.from(`${value.length}:`), value]);
  if (Array.isArray(value)) return Buffer.concat([Buffer.from('l'), ...value.map(bencode), Buffer.from('e')]);
  const entries: Array<[Buffer, Bencodable]> =
    value instanceof Map
      ? [...value].map(([k, v]) => [Buffer.isBuffer(k) ? k : Buffer.from(k, 'utf8'), v])
      : Object.entries(value).map(([k, v]) => [Buffer.from(k, 'utf8'), v]);
  entries.sort((a, b) => Buffer.compare(a[0], b[0]));
  return Buffer.concat([Buffer.from('d'), ...entries.flatMap(([k, v]) => [bencode(k), bencode(v)]), Buffer.from('e')]);
}

const BLOCK = 16 * 1024;
const sha1 = (b: Buffer) => createHash('sha1').update(b).digest();
const sha256 = (...b: Buffer[]) => {
  const h = createHash('sha256');
  for (const x of b) h.update(x);
  return h.digest();
};

/** The root of a balanced tree over `leaves`, padded with `pad` to a power of two. */
function root(leaves: Buffer[], pad: Buffer): Buffer {
  let level = [...leaves];
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

/** A file's BEP 52 pieces root and piece layer (empty for a file of one piece). */
export function merkle(content: Buffer, pieceLength: number): { piecesRoot: Buffer; layer: Buffer } {
  const blocks: Buffer[] = [];
  for (let i = 0; i < content.length; i += BLOCK) blocks.push(sha256(content.subarray(i, i + BLOCK)));
  const perPiece = pieceLength / BLOCK;
  const zero = Buffer.alloc(32);
  if (content.length <= pieceLength)
    return { piecesRoot: root(blocks.length ? blocks : [zero], zero), layer: Buffer.alloc(0) };
  const pieces: Buffer[] = [];
  for (let i = 0; i < blocks.length; i += perPiece) {
    const leaves = blocks.slice(i, i + perPiece);
    while (leaves.length < perPiece) leaves.push(zero);
    pieces.push(root(leaves, zero));
  }
  let pad = zero;
  for (let n = perPiece; n > 1; n /= 2) pad = sha256(pad, pad);
  return { piecesRoot: root(pieces, pad), layer: Buffer.concat(pieces) };
}

export interface Built {
  file: Buffer;
  v1?: string;
  v2?: string;
  info: Record<string, Bencodable>;
  top: Record<string, Bencodable>;
}

export type Kind = 'v1' | 'v2' | 'hybrid';

/** A one-file torrent of `content` (random by default), of the given kind. */
export function buildTorrent(
  kind: Kind,
  options: { name?: string; content?: Buffer; pieceLength?: number; extraTop?: Record<string, Bencodable> } = {},
): Built {
  const pieceLength = options.pieceLength ?? BLOCK;
  const content = options.content ?? randomBytes(3 * pieceLength + 1000);
  const name = options.name ?? `file-${randomBytes(3).toString('hex')}.bin`;
  const info: Record<string, Bencodable> = { name, 'piece length': pieceLength };
  const top: Record<string, Bencodable> = { ...options.extraTop };
  if (kind !== 'v2') {
    const pieces: Buffer[] = [];
    for (let i = 0; i < content.length; i += pieceLength) pieces.push(sha1(content.subarray(i, i + pieceLength)));
    info.pieces = Buffer.concat(pieces);
    info.length = content.length;
  }
  if (kind !== 'v1') {
    const { piecesRoot, layer } = merkle(content, pieceLength);
    info['meta version'] = 2;
    info['file tree'] = { [name]: { '': { length: content.length, 'pieces root': piecesRoot } } };
    if (layer.length) top['piece layers'] = new Map([[piecesRoot, layer]]);
  }
  return finish(info, top);
}

/** The file of `info` and `top` (the info bytes hashed as encoded here). */
export function finish(info: Record<string, Bencodable>, top: Record<string, Bencodable> = {}): Built {
  const infoBytes = bencode(info);
  const isV1 = 'pieces' in info;
  const isV2 = info['meta version'] === 2;
  const file = bencode({ ...top, info });
  return {
    file,
    info,
    top,
    ...(isV1 ? { v1: createHash('sha1').update(infoBytes).digest('hex') } : {}),
    ...(isV2 ? { v2: createHash('sha256').update(infoBytes).digest('hex') } : {}),
  };
}
