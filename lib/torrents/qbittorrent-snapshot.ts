import { TorrentClientAnswerError } from './errors';
import type { TorrentInfo, TorrentSnapshot } from './model';
import { isObject, readTorrent, sameTorrent } from './qbittorrent-answers';

/**
 * What this container knows of the client's torrents between two polls: the
 * last `sync/maindata` rid and the torrents it describes (decision 74), and
 * how an answer (maindata's changed fields, or a whole torrents/info list)
 * becomes a snapshot. No I/O: the client fetches, this reads.
 */
export class TorrentView {
  /** 0: the next read is a full one. */
  rid = 0;
  private lastFull = 0;
  private known = new Map<string, TorrentInfo>();
  /** server_state comes whole on a full update and as changed keys after: its free space is kept between answers. */
  private freeSpace: number | undefined;

  constructor(
    private readonly now: () => number,
    private readonly fullResyncMs: number,
    private readonly inScope: (t: TorrentInfo) => boolean,
  ) {}

  /** The rid to send: 0 (a full update) when the last full read is older than fullResyncMs. */
  nextRid(): number {
    if (this.rid !== 0 && this.fullDue()) this.rid = 0;
    return this.rid;
  }

  /** A sync/maindata answer: changed fields only, merged onto what this container knew of each id. */
  fromMaindata(body: unknown): TorrentSnapshot {
    if (!isObject(body) || typeof body.rid !== 'number')
      throw new TorrentClientAnswerError('sync/maindata did not answer an object with a rid');
    // qBittorrent sends `full_update` only when true (synccontroller.cpp); our rid 0 asked for one.
    const full = body.full_update === true || this.rid === 0;
    const next = full ? new Map<string, TorrentInfo>() : new Map(this.known);
    const changedIds: string[] = [];
    const torrents = isObject(body.torrents) ? body.torrents : {};
    for (const [id, partial] of Object.entries(torrents)) {
      if (!isObject(partial)) continue;
      // The entries carry no `hash`: the key is the torrent's id.
      next.set(id, readTorrent({ ...(next.get(id) ?? { hash: id }), ...partial, hash: id }));
      changedIds.push(id);
    }
    if (Array.isArray(body.torrents_removed))
      for (const id of body.torrents_removed) if (typeof id === 'string') next.delete(id);
    if (full) this.freeSpace = undefined;
    const free = isObject(body.server_state) ? body.server_state.free_space_on_disk : undefined;
    if (typeof free === 'number' && Number.isSafeInteger(free) && free >= 0) this.freeSpace = free;
    this.known = next;
    this.rid = body.rid;
    if (full) this.lastFull = this.now();
    const present = [...next.values()].filter(this.inScope);
    const changed = full
      ? present
      : changedIds.flatMap((id) => (next.has(id) && this.inScope(next.get(id)!) ? [next.get(id)!] : []));
    return { full, changed, present, ...(this.freeSpace !== undefined ? { free_space_bytes: this.freeSpace } : {}) };
  }

  /**
   * A whole torrents/info list (a server without maindata). No rid here: diff against this container's
   * previous list, so the poll's own work still follows the changes (only the transfer grows with the count).
   */
  fromList(all: TorrentInfo[]): TorrentSnapshot {
    const present = all.filter(this.inScope);
    const full = this.rid === 0 || this.fullDue();
    const changed = full ? present : present.filter((t) => !sameTorrent(this.known.get(t.hash), t));
    this.known = new Map(present.map((t) => [t.hash, t]));
    this.rid = 1;
    if (full) this.lastFull = this.now();
    return { full, changed, present };
  }

  private fullDue(): boolean {
    return this.now() - this.lastFull >= this.fullResyncMs;
  }
}
