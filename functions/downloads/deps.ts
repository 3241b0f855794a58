import { awsClients } from '../../lib/aws/clients';
import { config, loadTorrentClientConfig } from '../../lib/config';
import { DynamoDownloadStore } from '../../lib/downloads/dynamodb-store';
import type { DownloadsDeps } from '../../lib/downloads/service';
import { DynamoIdempotencyStore } from '../../lib/idempotency/dynamodb-store';
import type { IdempotencyDeps } from '../../lib/idempotency/service';
import { createLogger } from '../../lib/log';
import { DynamoLoginGateStore } from '../../lib/torrents/dynamodb-login-gate';
import { torrentClientFor } from '../../lib/torrents/qbittorrent';

/** The production wiring of the downloads functions, built once per container. */

export const log = createLogger({ domain: 'downloads' });

let deps: (DownloadsDeps & { missingGraceMs: number }) | undefined;

export function downloadsDeps(): DownloadsDeps & { missingGraceMs: number } {
  if (!deps) {
    const cfg = config();
    const torrent = loadTorrentClientConfig();
    const table = { documents: awsClients(cfg).documents, table: cfg.tables.downloads };
    deps = {
      store: new DynamoDownloadStore(table),
      // One client per container: its session, its Web API version and its sync/maindata rid live as long as the container.
      // The login gate is shared by all of them: refused logins back off across containers (decision 162).
      torrents: torrentClientFor(torrent, log, undefined, new DynamoLoginGateStore(table)),
      log,
      cancel: { action: torrent.cancelAction, deleteFiles: torrent.cancelDeleteFiles },
      missingGraceMs: torrent.missingGraceMs,
    };
  }
  return deps;
}

let idempotency: IdempotencyDeps | undefined;

/** Idempotency records of POST /downloads live in the downloads table (lib/idempotency/keys.ts). */
export function idempotencyDeps(): IdempotencyDeps {
  if (!idempotency) {
    const cfg = config();
    idempotency = {
      store: new DynamoIdempotencyStore({ documents: awsClients(cfg).documents, table: cfg.tables.downloads }),
      log,
    };
  }
  return idempotency;
}
