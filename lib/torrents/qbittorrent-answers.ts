import { TorrentClientAnswerError } from './errors';
import type { TorrentInfo } from './model';

/** Reading qBittorrent's answers: torrents, JSON, magnets' ids and version strings. No I/O. */

/**
 * Only the named fields, each of its type or absent: nothing else a client
 * answers (PK, SK, __proto__, …) travels further.
 */
export function readTorrent(raw: Record<string, unknown>): TorrentInfo {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  return {
    hash: (str(raw.hash) ?? '').toLowerCase(),
    ...(raw.infohash_v1 !== undefined ? { infohash_v1: (str(raw.infohash_v1) ?? '').toLowerCase() } : {}),
    ...(raw.infohash_v2 !== undefined ? { infohash_v2: (str(raw.infohash_v2) ?? '').toLowerCase() } : {}),
    name: str(raw.name) ?? '',
    state: str(raw.state) ?? '',
    progress: num(raw.progress) ?? NaN,
    added_on: num(raw.added_on) ?? 0,
    category: str(raw.category) ?? '',
    tags: str(raw.tags) ?? '',
    ...bytes('size', raw.size),
    ...bytes('amount_left', raw.amount_left),
    ...bytes('downloaded', raw.downloaded),
    ...bytes('dlspeed', raw.dlspeed),
    ...bytes('upspeed', raw.upspeed),
    ...bytes('eta', raw.eta),
    ...bytes('num_seeds', raw.num_seeds),
    ...bytes('num_leechs', raw.num_leechs),
    ...ratioOf(num(raw.ratio)),
    ...bytes('seeding_time', raw.seeding_time),
  };
}

/** A byte count as the client sends it: a non-negative safe integer, else absent (never a guess). */
function bytes<K extends string>(key: K, v: unknown): Partial<Record<K, number>> {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? ({ [key]: v } as Record<K, number>) : {};
}

function ratioOf(ratio: number | undefined): { ratio?: number } {
  return ratio !== undefined && ratio >= 0 ? { ratio } : {};
}

export function sameTorrent(a: TorrentInfo | undefined, b: TorrentInfo): boolean {
  return (
    a !== undefined &&
    (Object.keys(b) as Array<keyof TorrentInfo>).every(
      (k) => a[k] === b[k] || (Number.isNaN(a[k]) && Number.isNaN(b[k])),
    )
  );
}

export function parseJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const kind = /^\s*</.test(text) ? 'HTML' : 'malformed or truncated JSON';
    throw new TorrentClientAnswerError(`${path} answered ${kind}, not JSON: ${JSON.stringify(text.slice(0, 80))}`);
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The ids a torrent of this magnet may have in the client: its v1 hash, its v2 hash truncated to 40 hex. */
export function magnetIds(magnet: string): string[] {
  const ids: string[] = [];
  for (const xt of new URLSearchParams(magnet.replace(/^magnet:\?/, '')).getAll('xt')) {
    const v1 = /^urn:btih:([0-9a-f]{40})$/i.exec(xt)?.[1];
    const v2 = /^urn:btmh:1220([0-9a-f]{64})$/i.exec(xt)?.[1];
    if (v1) ids.push(v1.toLowerCase());
    if (v2) ids.push(v2.slice(0, 40).toLowerCase());
  }
  return ids;
}

export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
