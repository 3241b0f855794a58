import { serveUntilSignalled } from '../http';
import { Profile, PROFILES, QbittorrentEmulator } from './emulator';

/**
 * The emulator as a process (started by `npm start`): PORT, TORRENT_CLIENT_USERNAME,
 * TORRENT_CLIENT_PASSWORD, QBT_EMULATOR_PROFILE (4.6 | 5.1 | 5.2, default 5.1),
 * TORRENT_CLIENT_API_KEY (accepted by the 5.2 profile).
 */
const profile = (process.env.QBT_EMULATOR_PROFILE || '5.1') as Profile;
if (!PROFILES.includes(profile)) throw new Error(`QBT_EMULATOR_PROFILE must be one of ${PROFILES.join(', ')}`);
serveUntilSignalled(
  'qbittorrent emulator',
  new QbittorrentEmulator({
    username: process.env.TORRENT_CLIENT_USERNAME ?? 'admin',
    password: process.env.TORRENT_CLIENT_PASSWORD ?? 'adminadmin',
    apiKey: process.env.QBT_EMULATOR_API_KEY || undefined,
    profile,
  }),
  8080,
);
