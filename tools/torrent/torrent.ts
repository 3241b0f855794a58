import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ensureSystemDep } from '../stack/system-deps';

/**
 * Real torrents of local files, for the seeding command and the real-client
 * tests: libtorrent (python3-libtorrent) makes the .torrent, and its info
 * hashes are computed here again from the file's bytes (SHA-1 and SHA-256 of
 * the bencoded `info` dictionary), so a test compares three independent
 * answers: ours, libtorrent's, and what qBittorrent reports.
 */

export type TorrentKind = 'v1' | 'v2' | 'hybrid';
export const TORRENT_KINDS: readonly TorrentKind[] = ['v1', 'v2', 'hybrid'];

export interface MadeTorrent {
  kind: TorrentKind;
  file: string;
  torrentFile: string;
  /** The torrent's name: the file's base name. */
  name: string;
  /** 40 hex, absent for a v2-only torrent. */
  v1?: string;
  /** 64 hex, absent for a v1-only torrent. */
  v2?: string;
}

export function makeTorrent(file: string, kind: TorrentKind, torrentFile: string): MadeTorrent {
  const python = ensureSystemDep('libtorrent', (line) => process.stdout.write(`[torrent] ${line}\n`));
  const out = execFileSync(python, [path.join(__dirname, 'make_torrent.py'), file, kind, torrentFile], {
    encoding: 'utf8',
  });
  const [v1, v2] = out.trim().split(' ');
  const ours = infohashesOf(fs.readFileSync(torrentFile));
  const theirs = { v1: v1 === '-' ? undefined : v1, v2: v2 === '-' ? undefined : v2 };
  if (ours.v1 !== theirs.v1 || ours.v2 !== theirs.v2)
    throw new Error(`${torrentFile}: libtorrent says ${out.trim()}, its bytes hash to ${ours.v1} ${ours.v2}`);
  return { kind, file, torrentFile, name: path.basename(file), ...ours };
}

/**
 * The info hashes of a .torrent: v1 = SHA-1 of the bencoded info dictionary
 * when it has `pieces`, v2 = SHA-256 of it when it has `meta version` 2.
 */
export function infohashesOf(torrent: Buffer): { v1?: string; v2?: string } {
  const info = rawInfo(torrent);
  const text = info.toString('latin1');
  // Top-level keys of the info dict only would be stricter; these two keys cannot appear inside a file tree's names
  // with these exact bencoded lengths in the torrents we make.
  const hasV1 = text.includes('6:pieces');
  const hasV2 = text.includes('12:meta versioni2e');
  return {
    ...(hasV1 ? { v1: createHash('sha1').update(info).digest('hex') } : {}),
    ...(hasV2 ? { v2: createHash('sha256').update(info).digest('hex') } : {}),
  };
}

/** The bytes of the top-level `info` value, exactly as they are in the file. */
function rawInfo(buf: Buffer): Buffer {
  if (buf[0] !== 0x64) throw new Error('not a bencoded dictionary');
  let at = 1;
  while (buf[at] !== 0x65) {
    const [key, valueAt] = readString(buf, at);
    const end = skip(buf, valueAt);
    if (key === 'info') return buf.subarray(valueAt, end);
    at = end;
  }
  throw new Error('no info dictionary');
}

function readString(buf: Buffer, at: number): [string, number] {
  const colon = buf.indexOf(0x3a, at);
  const length = Number(buf.subarray(at, colon).toString('latin1'));
  if (!Number.isInteger(length) || length < 0) throw new Error(`bad string length at ${at}`);
  return [buf.subarray(colon + 1, colon + 1 + length).toString('latin1'), colon + 1 + length];
}

function skip(buf: Buffer, at: number): number {
  const c = buf[at];
  if (c === 0x69) return buf.indexOf(0x65, at) + 1; // i…e
  if (c === 0x6c || c === 0x64) {
    // l…e / d…e
    at++;
    while (buf[at] !== 0x65) at = skip(buf, at);
    return at + 1;
  }
  if (c >= 0x30 && c <= 0x39) return readString(buf, at)[1];
  throw new Error(`bad bencode at ${at}`);
}

/** The id qBittorrent gives the torrent: its v1 hash, or its v2 hash truncated to 40 hex (v2-only and hybrid). */
export function clientIdOf(t: Pick<MadeTorrent, 'v1' | 'v2'>): string {
  return t.v2 ? t.v2.slice(0, 40) : t.v1!;
}

/**
 * A magnet for a made torrent: both hashes (a hybrid), or `btihOnly` (only its
 * v1: the client learns the v2 from the metadata, and switches its id), with
 * the seeders as `x.pe` peers (the closed swarm has no DHT or tracker).
 */
export function magnetOf(t: MadeTorrent, opts: { peers?: string[]; btihOnly?: boolean } = {}): string {
  const parts: string[] = [];
  if (t.v1) parts.push(`xt=urn:btih:${t.v1}`);
  if (t.v2 && !(opts.btihOnly && t.v1)) parts.push(`xt=urn:btmh:1220${t.v2}`);
  parts.push(`dn=${encodeURIComponent(t.name)}`);
  for (const peer of opts.peers ?? []) parts.push(`x.pe=${peer}`);
  return `magnet:?${parts.join('&')}`;
}
