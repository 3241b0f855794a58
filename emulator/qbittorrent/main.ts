import { QbittorrentEmulator } from './emulator';

/** The emulator as a process (started by `npm start`): PORT, TORRENT_CLIENT_USERNAME, TORRENT_CLIENT_PASSWORD. */
async function main() {
  const emulator = new QbittorrentEmulator({
    username: process.env.TORRENT_CLIENT_USERNAME ?? 'admin',
    password: process.env.TORRENT_CLIENT_PASSWORD ?? 'adminadmin',
  });
  const url = await emulator.listen(Number(process.env.PORT ?? 8080));
  process.stdout.write(`qbittorrent emulator listening on ${url}\n`);
  const stop = () => void emulator.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
