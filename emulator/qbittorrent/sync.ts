import type { EmulatedTorrent, TorrentTable } from './torrents';

/** sync/maindata: changed fields since `rid`; a full update when rid is 0 or older than the history kept. */
export function maindata(table: TorrentTable, since: number): Record<string, unknown> {
  const full = !(since > 0) || since < table.oldestRid || since > table.rid;
  const torrents: Record<string, Partial<EmulatedTorrent>> = {};
  for (const [id, t] of table.tracked) {
    if (full || t.created > since) torrents[id] = { ...t.torrent };
    else {
      const fields = [...t.changed].filter(([, rid]) => rid > since).map(([field]) => field);
      if (fields.length) torrents[id] = Object.fromEntries(fields.map((f) => [f, t.torrent[f]]));
    }
  }
  const removed = full ? [] : table.removed.filter((r) => r.rid > since && !table.tracked.has(r.id)).map((r) => r.id);
  return {
    rid: table.rid,
    full_update: full,
    torrents,
    ...(removed.length ? { torrents_removed: removed } : {}),
    server_state: {},
  };
}
