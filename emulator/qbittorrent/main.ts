import { serveUntilSignalled } from '../http';
import { QbittorrentEmulator } from './emulator';

/** The emulator as a process (started by `npm start`): PORT, TORRENT_CLIENT_USERNAME, TORRENT_CLIENT_PASSWORD. */
serveUntilSignalled(
  'qbittorrent emulator',
  new QbittorrentEmulator({
    username: process.env.TORRENT_CLIENT_USERNAME ?? 'admin',
    password: process.env.TORRENT_CLIENT_PASSWORD ?? 'adminadmin',
  }),
  8080,
);
