import type { Logger } from '../log';
import type { TorrentClientConfig } from './config';
import { DynamoLoginGateStore } from './dynamodb-login-gate';
import { QBittorrentClient, torrentClientFor } from './qbittorrent';

/**
 * The torrent client as deployed: the configured qBittorrent behind the login
 * gate, whose one item lives in the table it is given (the downloads table),
 * shared by every container so refused logins back off across them (decision 162).
 */
export function deployedTorrentClient(
  cfg: TorrentClientConfig,
  log: Logger,
  gateTable: ConstructorParameters<typeof DynamoLoginGateStore>[0],
): QBittorrentClient {
  return torrentClientFor(cfg, log, undefined, new DynamoLoginGateStore(gateTable));
}
