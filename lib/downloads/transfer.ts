import type { TorrentInfo } from '../torrents/model';
import { parseIsoTime } from '../clock';
import { type Download, type Transfer, TRANSFER_KEYS, transferFields } from './model';

/**
 * A download's transfer figures (size, downloaded, speeds, ETA, seeds/peers, ratio): the client's own, from the
 * sync/maindata the poll already reads, kept on the download item by the poll's guarded writes (decision 408).
 *
 * Each figure is sanitised here, once: a NaN, a negative, a fraction where a count belongs or a number past
 * what a double holds exactly is ABSENT, never a guess; qBittorrent's "infinite" ETA (8640000 s, 100 days:
 * MAX_ETA in its sources) is absent too (the card says "unknown"), and a ratio past qBittorrent's own cap
 * (MAX_RATIO 9999) is capped.
 */

/** qBittorrent's ETA for "never" (src/base/bittorrent/torrent.h MAX_ETA = 8640000 s). */
export const INFINITE_ETA_S = 8_640_000;
/** qBittorrent shows a ratio over this as ∞ (torrent.h MAX_RATIO). */
export const MAX_RATIO = 9999;

/** Figures-only writes at most this often per download (decision 408): progress, a state or a hold write at once. */
export const TRANSFER_WRITE_INTERVAL_MS = 2 * 60_000;

const count = (v: number | undefined): number | undefined =>
  v !== undefined && Number.isSafeInteger(v) && v >= 0 ? v : undefined;

/** The figures of one torrent, sanitised; undefined when the client said none of them. */
export function transferOf(t: TorrentInfo): Transfer | undefined {
  const eta = count(t.eta);
  const ratio = t.ratio !== undefined && Number.isFinite(t.ratio) && t.ratio >= 0 ? t.ratio : undefined;
  const figures: Transfer = {
    ...opt('size_bytes', count(t.size)),
    ...opt('downloaded_bytes', count(t.downloaded)),
    ...opt('dl_speed', count(t.dlspeed)),
    ...opt('up_speed', count(t.upspeed)),
    ...opt('eta_s', eta !== undefined && eta < INFINITE_ETA_S ? eta : undefined),
    ...opt('seeds', count(t.num_seeds)),
    ...opt('peers', count(t.num_leechs)),
    ...opt('ratio', ratio === undefined ? undefined : Math.round(Math.min(ratio, MAX_RATIO) * 1000) / 1000),
  };
  return Object.keys(figures).length > 0 ? figures : undefined;
}

const opt = <K extends keyof Transfer>(key: K, v: Transfer[K] | undefined): Partial<Transfer> =>
  v === undefined ? {} : ({ [key]: v } as Partial<Transfer>);

/** The figures as the download item holds them (absent when it holds none). */
export function storedTransfer(d: Download): Transfer | undefined {
  const figures = transferFields(d);
  return Object.keys(figures).length > 0 ? figures : undefined;
}

export function sameTransfer(a: Transfer | undefined, b: Transfer | undefined): boolean {
  return TRANSFER_KEYS.every((k) => a?.[k] === b?.[k]);
}

/**
 * Whether the poll writes these figures now: they differ from the stored ones, AND something else is written
 * anyway (`alongside`: progress, missing_since, the clock) or the stored ones are older than the interval.
 * Speeds change on every poll; without the bound every active download would be written (and streamed, and
 * edited in Telegram) every minute.
 */
export function transferDue(
  d: Download,
  figures: Transfer | undefined,
  alongside: boolean,
  now: number,
  intervalMs = TRANSFER_WRITE_INTERVAL_MS,
): boolean {
  if (!figures || sameTransfer(storedTransfer(d), figures)) return false;
  if (alongside) return true;
  const at = d.transfer_at === undefined ? undefined : parseIsoTime(d.transfer_at);
  return at === undefined || now - at >= intervalMs;
}
