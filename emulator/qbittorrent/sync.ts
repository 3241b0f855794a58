import { Profile, serialised } from './profiles';
import type { EmulatedTorrent, TorrentTable } from './torrents';

/**
 * sync/maindata for one session, as SyncController::maindataAction does it
 * (src/webui/api/synccontroller.cpp, 4.6.7 to 5.2.3): each session counts its
 * own answers (rid 1, 2, … cycling at 1,000,000); a rid gets changes only if
 * it is the last answer sent or the last one accepted, anything else a full
 * update. A full update makes the whole snapshot the session's buffer, so a
 * later answer to the older accepted rid repeats every torrent and no longer
 * lists what was removed before it. Entries carry no `hash` (the key is the
 * torrent's id); `full_update` is sent only when true; `torrents`,
 * `torrents_removed` and `server_state` only when they have something (a
 * delta's server_state carries its changed keys: here the free space).
 */
export class MaindataSync {
  private lastSentId = 0;
  private lastSentVersion = 0;
  private acceptedId = -1;
  /** Changes since `base` (table rid), or with `whole`, every torrent as of `base` and what changed since. */
  private buffer = { base: 0, whole: true };

  answer(table: TorrentTable, ridParam: string | null, profile: Profile): Record<string, unknown> {
    const asked = toInt(ridParam);
    let full = true;
    if (asked > 0 && this.lastSentId > 0) {
      if (this.lastSentId === asked) {
        this.acceptedId = asked;
        this.buffer = { base: this.lastSentVersion, whole: false };
      }
      if (this.acceptedId === asked) full = false;
    }
    // The emulator keeps a bounded history of removals: past it, only a full update is right.
    if (!full && this.buffer.base < table.oldestRid) full = true;
    if (full) this.buffer = { base: table.rid, whole: true };
    const id = (this.lastSentId % 1_000_000) + 1;
    this.lastSentId = id;
    this.lastSentVersion = table.rid;
    const torrents = entries(table, this.buffer, profile);
    const removed = full ? [] : removedSince(table, this.buffer.base);
    return {
      rid: id,
      ...(full ? { full_update: true } : {}),
      ...(Object.keys(torrents).length ? { torrents } : {}),
      ...(removed.length ? { torrents_removed: removed } : {}),
      ...(full
        ? { server_state: { ...SERVER_STATE, free_space_on_disk: table.freeSpace } }
        : table.freeSpaceRid > this.buffer.base
          ? { server_state: { free_space_on_disk: table.freeSpace } }
          : {}),
    };
  }
}

function entries(table: TorrentTable, buffer: { base: number; whole: boolean }, profile: Profile) {
  const torrents: Record<string, Partial<EmulatedTorrent>> = {};
  for (const [id, t] of table.tracked) {
    const { hash: _id, ...fields } = t.torrent; // SyncController removes KEY_TORRENT_ID ("hash")
    if (buffer.whole || t.created > buffer.base) torrents[id] = serialised(profile, fields);
    else {
      const changed = [...t.changed].filter(([, rid]) => rid > buffer.base).map(([field]) => field);
      const delta = serialised(profile, Object.fromEntries(changed.map((f) => [f, t.torrent[f]])));
      if (Object.keys(delta).length) torrents[id] = delta;
    }
  }
  return torrents;
}

function removedSince(table: TorrentTable, base: number): string[] {
  return [...new Set(table.removed.filter((r) => r.rid > base && !table.tracked.has(r.id)).map((r) => r.id))];
}

/** QString::toInt: digits (with a sign) or 0. */
function toInt(value: string | null): number {
  return value !== null && /^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : 0;
}

/** A few of server_state's keys (getTransferInfo and maindata's own), sent with a full update. */
const SERVER_STATE = {
  connection_status: 'connected',
  dl_info_data: 0,
  dl_info_speed: 0,
  up_info_data: 0,
  up_info_speed: 0,
  queueing: true,
  refresh_interval: 1500,
};
