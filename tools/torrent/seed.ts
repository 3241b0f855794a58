import fs from 'node:fs';
import path from 'node:path';
import { QbtSession, startQbittorrent } from '../stack/qbittorrent';
import { CliArgs, cliSpec, runCli, UsageError } from '../cli/run';
import { clientIdOf, magnetOf, makeTorrent, TorrentKind } from './torrent';

/**
 * `npm run torrent:seed -- <file> [--v1|--v2|--hybrid] [--btih-only]` (`--help`): makes a
 * torrent of a local file, seeds it from a second qbittorrent-nox of its own
 * (a closed swarm on loopback, like the stack's client), and prints a magnet
 * naming that seeder as its peer (`x.pe`). Paste the magnet into the web UI
 * (or POST /downloads) of `npm start`'s stack and watch it download, complete
 * and notify. Ctrl-C stops the seeder.
 */

const root = path.resolve(__dirname, '..', '..');
const say = (line: string) => process.stdout.write(`[seed] ${line}\n`);

export const SEED_CLI = cliSpec({
  usage: `usage: npm run torrent:seed -- <file> [--v1|--v2|--hybrid] [--btih-only]

Makes a torrent of a local file, seeds it from a second qbittorrent-nox of its own
(a closed swarm on loopback unless QBT_PUBLIC_SWARM=true) and prints a magnet naming
that seeder as its peer: add it in the web UI of \`npm start\` (or POST /downloads).
Ctrl-C stops the seeder.

  --v1 | --v2 | --hybrid  the torrent's kind (default --hybrid)
  --btih-only             a magnet with the v1 hash only (no btmh)
  --help                  this text

Exit 0 stopped by Ctrl-C, 1 the seeder failed, 2 bad usage.`,
  options: {
    v1: { type: 'boolean' },
    v2: { type: 'boolean' },
    hybrid: { type: 'boolean' },
    'btih-only': { type: 'boolean' },
  },
  positionals: { min: 1, max: 1 },
});

async function main({ values, positionals: [given] }: CliArgs<typeof SEED_CLI.options>): Promise<number> {
  const kinds = (['v1', 'v2', 'hybrid'] as const).filter((k) => values[k]);
  if (kinds.length > 1) throw new UsageError('choose one of --v1, --v2, --hybrid');
  const kind: TorrentKind = kinds[0] ?? 'hybrid';
  const file = path.resolve(given);
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) throw new UsageError(`${given} is not a file`);

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
  process.stdout.write(`${magnetOf(made, { peers: [peer], btihOnly: values['btih-only'] === true })}\n`);
  say('Ctrl-C stops the seeder');
  return new Promise<number>(() => {}); // runs until Ctrl-C
}

// Whatever fails past the arguments (qbittorrent-nox, libtorrent) says so in one line: exit 1, no stack.
if (require.main === module) runCli(SEED_CLI, main, { crash: { code: 1, stack: false } });
