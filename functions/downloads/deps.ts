import { awsClients } from '../../lib/aws/clients';
import { config, loadTorrentClientConfig } from '../../lib/config';
import { DynamoDownloadStore } from '../../lib/downloads/dynamodb-store';
import type { DownloadsDeps } from '../../lib/downloads/service';
import { DynamoIdempotencyStore } from '../../lib/idempotency/dynamodb-store';
import type { IdempotencyDeps } from '../../lib/idempotency/service';
import { createLogger } from '../../lib/log';
import { QBittorrentClient } from '../../lib/torrents/qbittorrent';

/** The production wiring of the downloads functions, built once per container. */

export const log = createLogger({ domain: 'downloads' });

let deps: DownloadsDeps | undefined;

export function downloadsDeps(): DownloadsDeps {
  if (!deps) {
    const cfg = config();
    const torrent = loadTorrentClientConfig();
    deps = {
      store: new DynamoDownloadStore({ documents: awsClients(cfg).documents, table: cfg.tables.downloads }),
      torrents: new QBittorrentClient({ baseUrl: torrent.url, username: torrent.username, password: torrent.password, timeoutMs: torrent.timeoutMs }),
      log,
    };
  }
  return deps;
}

let idempotency: IdempotencyDeps | undefined;

/** Idempotency records of POST /downloads live in the downloads table (lib/idempotency/keys.ts). */
export function idempotencyDeps(): IdempotencyDeps {
  if (!idempotency) {
    const cfg = config();
    idempotency = { store: new DynamoIdempotencyStore({ documents: awsClients(cfg).documents, table: cfg.tables.downloads }), log };
  }
  return idempotency;
}
