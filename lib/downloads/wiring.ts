import { awsClients } from '../aws/clients';
import { config, perEnvironment } from '../config';
import { createLogger } from '../log';
import { loadTorrentClientConfig } from '../torrents/config';
import { deployedTorrentClient } from '../torrents/wiring';
import { DynamoDownloadStore } from './dynamodb-store';
import type { DownloadsDeps } from './service';

/**
 * The downloads domain as deployed: its DynamoDB store and the torrent client,
 * from the environment, once per container. Every surface (the API, the web
 * UI, the bot, the console) calls the service through this one wiring.
 */

export const downloadsLog = createLogger({ domain: 'downloads' });

/** Built again after a secret changed: a rotated torrent-client password opens a new session (lib/config/generation.ts). */
export const downloadsDeps = perEnvironment((): DownloadsDeps & { missingGraceMs: number } => {
  const cfg = config();
  const torrent = loadTorrentClientConfig();
  const table = { documents: awsClients(cfg).documents, table: cfg.tables.downloads };
  return {
    store: new DynamoDownloadStore(table),
    // One client per container: its session, its Web API version and its sync/maindata rid live as long as the container.
    torrents: deployedTorrentClient(torrent, downloadsLog, table),
    log: downloadsLog,
    cancel: { action: torrent.cancelAction, deleteFiles: torrent.cancelDeleteFiles },
    missingGraceMs: torrent.missingGraceMs,
  };
});
