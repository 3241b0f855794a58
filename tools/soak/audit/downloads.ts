import { downloadFromItem } from '../../../lib/downloads/keys';
import { Download, isActive } from '../../../lib/downloads/model';
import type { CreatedDownload } from '../load/downloads';
import { violation, Violation } from './violations';

/**
 * The downloads domain's audit, from the table's raw items and the real
 * qBittorrent's torrent list: at most one active download per infohash and a
 * guard naming it, every create answered 2xx readable, client and store in
 * agreement after the drain, and the torrent of another category (planted
 * before the load) exactly as it was.
 */

export interface Torrent {
  hash: string;
  infohash_v1?: string;
  infohash_v2?: string;
  category?: string;
  tags?: string;
  save_path?: string;
  name?: string;
}

export interface DownloadsAuditInput {
  items: Record<string, unknown>[];
  created: CreatedDownload[];
  torrents: Torrent[];
  category: string;
  /** The foreign torrent as planted, and as found now (undefined: gone). */
  foreign?: { before: Torrent; after?: Torrent };
}

const hashesOf = (t: Torrent) => [t.hash, t.infohash_v1, t.infohash_v2].filter((h): h is string => !!h);

export function auditDownloads(input: DownloadsAuditInput): Violation[] {
  const out: Violation[] = [];
  const downloads = new Map<string, Download>();
  for (const item of input.items)
    if (item.SK === 'META' && item.entity === 'download') {
      const d = downloadFromItem(item);
      downloads.set(d.id, d);
    }
  const active = [...downloads.values()].filter((d) => isActive(d.state));

  const ownersOf = new Map<string, string[]>();
  for (const d of active)
    for (const h of d.infohashes) ownersOf.set(h.infohash, [...(ownersOf.get(h.infohash) ?? []), d.id]);
  for (const [hash, owners] of ownersOf) {
    if (owners.length > 1)
      out.push(
        violation('downloads: at most one active download per infohash', `${hash}: active in ${owners.join(', ')}`),
      );
    const guard = input.items.find((i) => i.PK === `IH#${hash}` && i.SK === 'ACTIVE');
    if (!guard || !owners.includes(String(guard.download_id)))
      out.push(
        violation(
          'downloads: the guard names the active download',
          `${hash}: guard ${String(guard?.download_id)}, active ${owners.join(', ')}`,
        ),
      );
  }
  for (const guard of input.items.filter((i) => i.SK === 'ACTIVE' && String(i.PK).startsWith('IH#'))) {
    const hash = String(guard.PK).slice(3);
    if (!ownersOf.has(hash))
      out.push(
        violation(
          'downloads: the guard names the active download',
          `${hash}: guard names ${String(guard.download_id)}, which is not active`,
        ),
      );
  }

  for (const c of input.created)
    if (!downloads.has(c.id))
      out.push(
        violation(
          'downloads: every create answered 2xx is readable',
          `${c.id} (answered ${c.status}) is not in the table`,
        ),
      );

  const ours = input.torrents.filter((t) => t.category === input.category);
  for (const d of active) {
    const present = ours.some((t) => d.infohashes.some((h) => hashesOf(t).includes(h.infohash)));
    // Missing and noticed (missing_since, a review reason) is the poll's designed answer; missing unnoticed is not.
    if (!present && !d.missing_since && !d.review_reason)
      out.push(
        violation(
          'downloads: client and store agree after the drain',
          `${d.id} (${d.state}) has no torrent in the client`,
        ),
      );
  }
  const known = new Set([...downloads.values()].flatMap((d) => d.infohashes.map((h) => h.infohash)));
  for (const t of ours)
    if (!hashesOf(t).some((h) => known.has(h)))
      out.push(
        violation('downloads: client and store agree after the drain', `torrent ${t.hash} (${t.name}) has no download`),
      );

  if (input.foreign) {
    const { before, after } = input.foreign;
    const same = (k: keyof Torrent) => before[k] === after?.[k];
    if (!after || !same('category') || !same('tags') || !same('save_path') || !same('name'))
      out.push(
        violation(
          'downloads: no torrent outside the category touched',
          `${before.hash}: ${JSON.stringify(before)} became ${JSON.stringify(after)}`,
        ),
      );
  }
  return out;
}
