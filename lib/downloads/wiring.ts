import { awsClients } from '../aws/clients';
import { config, perEnvironment } from '../config';
import { EnvReader } from '../config/env';
import { createLogger } from '../log';
import { loadTorrentClientConfig } from '../torrents/config';
import { deployedTorrentClient } from '../torrents/wiring';
import { DiskSettings, loadDiskSettings } from './disk-guard';
import { DynamoCategoryRecordStore } from './dynamodb-categories';
import { DynamoDiskRecordStore } from './dynamodb-disk';
import { DynamoDownloadStore } from './dynamodb-store';
import { LifecycleSettings, loadLifecycleSettings } from './lifecycle';
import type { DownloadsDeps } from './service';
import { loadShareSettings, ShareSettings } from './share-goals';

/**
 * The downloads domain as deployed: its DynamoDB store and the torrent client,
 * from the environment, once per container. Every surface (the API, the web
 * UI, the bot, the console) calls the service through this one wiring.
 */

export const downloadsLog = createLogger({ domain: 'downloads' });

const table = () => ({ documents: awsClients(config()).documents, table: config().tables.downloads });
const torrentSettings = perEnvironment(() => loadTorrentClientConfig());
const magnetOptions = perEnvironment(() => {
  const r = new EnvReader(process.env);
  const allow = r.string('MAGNET_ALLOW_PRIVATE_ADDRESSES', {
    default: 'false',
    pattern: /^(true|false)$/,
    hint: 'true or false: whether magnets may name trackers and peers on internal hosts (the local stack: true)',
  });
  r.done();
  return { allowPrivateAddresses: allow === 'true' };
});
const lifecycleSettings = perEnvironment(() => loadLifecycleSettings());
const diskSettings = perEnvironment(() => loadDiskSettings());
const shareSettings = perEnvironment(() => loadShareSettings());
type PollSettings = {
  missingGraceMs: number;
  lifecycle: LifecycleSettings;
  disk: DiskSettings;
  diskRecords: DynamoDiskRecordStore;
  share: ShareSettings;
  categoryRecords: DynamoCategoryRecordStore;
};
// One client per container and credentials: its session, its Web API version and its sync/maindata rid live as long as both.
const torrentClient = perEnvironment(() => deployedTorrentClient(torrentSettings(), downloadsLog, table()));

/**
 * Built again after a secret changed (lib/config/generation.ts). The torrent client and its settings are
 * loaded at first use: the functions that only read downloads (list, get, the pages, the console) are given
 * no torrent-client secret on AWS, and never touch the client.
 */
export const downloadsDeps = perEnvironment((): DownloadsDeps & PollSettings => ({
  store: new DynamoDownloadStore(table()),
  get torrents() {
    return torrentClient();
  },
  log: downloadsLog,
  get cancel() {
    const torrent = torrentSettings();
    return { action: torrent.cancelAction, deleteFiles: torrent.cancelDeleteFiles };
  },
  get magnets() {
    return magnetOptions();
  },
  get missingGraceMs() {
    return torrentSettings().missingGraceMs;
  },
  get lifecycle() {
    return lifecycleSettings();
  },
  get disk() {
    return diskSettings();
  },
  get share() {
    return shareSettings();
  },
  diskRecords: new DynamoDiskRecordStore(table()),
  categoryRecords: new DynamoCategoryRecordStore(table()),
}));
