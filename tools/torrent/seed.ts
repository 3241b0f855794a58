import fs from 'node:fs';
import path from 'node:path';
import { QbtSession, startQbittorrent } from '../stack/qbittorrent';
import { clientIdOf, magnetOf, makeTorrent, TorrentKind } from './torrent';

/**
 * `npm run torrent:seed -- <file> [--v1|--v2|--hybrid] [--btih-only]`: makes a
 * torrent of a local file, seeds it from a second qbittorrent-nox of its own
 * (a closed swarm on loopback, like the stack's client), and prints a magnet
 * naming that seeder as its peer (`x.pe`). Paste the magnet into the web UI
 * (or POST /downloads) of `npm start`'s stack and watch it download, complete
 * and notify. Ctrl-C stops the seeder.
 */

const root = path.resolve(__dirname, '..', '..');
const say = (line: string) => process.stdout.write(`[seed] ${line}\n`);

function usage(message?: string): never {
  if (message) process.stderr.write(`[seed] ${message}\n`);
  process.stderr.write('usage: npm run torrent:seed -- <file> [--v1|--v2|--hybrid] [--btih-only]\n');
  process.exit(2);
}

async function main() {
  const args = process.argv.slice(2);
  const kinds = args.filter((a) => ['--v1', '--v2', '--hybrid'].includes(a));
  const unknown = args.filter((a) => a.startsWith('--') && ![...kinds, '--btih-only'].includes(a));
  const files = args.filter((a) => !a.startsWith('--'));
  if (unknown.length) usage(`unknown option ${unknown[0]}`);
  if (files.length !== 1 || kinds.length > 1) usage();
  const kind = (kinds[0]?.slice(2) ?? 'hybrid') as TorrentKind;
  const file = path.resolve(files[0]);
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) usage(`${files[0]} is not a file`);

  const dir = path.join(root, '.stack', 'seeder');
  fs.mkdirSync(path.join(dir, 'torrents'), { recursive: true });
  const made = makeTorrent(file, kind, path.join(dir, 'torrents', `${path.basename(file)}.${kind}.torrent`));
  const seeder = await startQbittorrent({
    name: 'qbittorrent-seeder',
    profileDir: dir,
    logDir: dir,
    say,
    publicSwarm: process.env.QBT_PUBLIC_SWARM === 'true',
  });
  const stop = async () => {
    say('stopping the seeder');
    await seeder.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  await QbtSession.of(seeder).seed(made.torrentFile, path.dirname(file), clientIdOf(made));
  const peer = `127.0.0.1:${seeder.torrentPort}`;
  say(`${kind} torrent of ${file} (${fs.statSync(file).size} bytes): ${made.torrentFile}`);
  if (made.v1) say(`  v1 ${made.v1}`);
  if (made.v2) say(`  v2 ${made.v2}`);
  say(`seeding from ${seeder.url} (pid ${seeder.pid}, peer ${peer}, log ${path.relative(root, seeder.logFile)})`);
  say('magnet (add it in the web UI, or POST /downloads {"magnet": …}):');
  process.stdout.write(`${magnetOf(made, { peers: [peer], btihOnly: args.includes('--btih-only') })}\n`);
  say('Ctrl-C stops the seeder');
}

main().catch((err) => {
  process.stderr.write(`[seed] ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
