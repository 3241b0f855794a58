import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { grantJson, newToken, SCOPES } from '../../lib/auth/tokens';
import { freePort } from '../stack/ports';
import { QbtSession, RunningQbittorrent, startQbittorrent } from '../stack/qbittorrent';
import { startStack, Stack } from '../stack/stack';
import { clientIdOf, magnetOf, makeTorrent, MadeTorrent, TORRENT_KINDS } from '../torrent/torrent';

/**
 * The soak's stack: `startStack` as `npm start` calls it (offline's NATS
 * plugin, schedules on, the real qbittorrent-nox, every emulator), on free
 * ports and a state folder of its own so it never meets a developer's stack.
 * Beside it, a second qbittorrent-nox seeding a few small torrents (v1, v2,
 * hybrid) the service's client can complete in the closed swarm.
 */

export interface SoakStack {
  stack: Stack;
  stateDir: string;
  httpUrl: string;
  lambdaUrl: string;
  token: string;
  /** What the supervisor said about a service dying after start, with when. */
  deaths: Array<{ at: number; line: string }>;
  /** Set when the stack stopped itself (a service died and was not brought back). */
  fatal?: string;
  /** Called when it does (the runner ends the load). */
  onFatal?: () => void;
  seeder: RunningQbittorrent;
  seeded: Array<MadeTorrent & { magnet: string }>;
  client: QbtSession;
  /** A new login: a session from before a kill of qbittorrent-nox is refused (403) by the restarted one. */
  freshClient(): QbtSession;
  stop(): Promise<void>;
}

export async function startSoakStack(
  root: string,
  say: (line: string) => void,
  opts: { hourMs: number; hotFolder: 'smb' | 'local' },
): Promise<SoakStack> {
  const stateDir = path.join(root, '.stack', `soak-${process.pid}`);
  fs.rmSync(stateDir, { recursive: true, force: true });
  fs.mkdirSync(stateDir, { recursive: true });
  const token = newToken();
  // As npm start: schedules on, the real client. Nothing of the developer's own systems (useExternal: false).
  process.env.SCHEDULES_ENABLED = 'true';
  process.env.STACK_TORRENT_CLIENT = 'qbittorrent';
  // The scan functions behind a Samba share of the stack's (smbd among the faults), or the folder itself.
  process.env.STACK_HOTFOLDER = opts.hotFolder;
  delete process.env.TBANK_API_URL;
  delete process.env.TELEGRAM_BOT_TOKEN;
  // A step lost to a fault is settled after this bound, not npm start's 15 min: the drain must see attempts end.
  process.env.WORK_WAIT_BOUND_MS ??= '120000';
  // The sync hour in minutes (SYNC_HOUR_MS): a connection is synced every few minutes, not once in the run.
  process.env.SYNC_HOUR_MS = String(opts.hourMs);
  const [httpPort, lambdaPort] = [await freePort(), await freePort()];
  const deaths: SoakStack['deaths'] = [];
  const soak: Partial<SoakStack> = { stateDir, token, deaths };
  const stack = await startStack({
    root,
    stateDir,
    httpPort,
    lambdaPort,
    natsTrigger: 'plugin',
    authTokens: JSON.stringify([grantJson('soak', token, SCOPES)]),
    useExternal: false,
    say: (line) => {
      if (line.includes('died after start')) deaths.push({ at: Date.now(), line });
      fs.appendFileSync(path.join(stateDir, 'stack.log'), line + '\n');
      say(line);
    },
    onFatal: (death) => {
      soak.fatal = `${death.service}: ${death.reason}; ${death.detail ?? ''}`;
      soak.onFatal?.();
    },
  });
  let seeder: RunningQbittorrent | undefined;
  try {
    if (soak.fatal) throw new Error(`the stack stopped itself while starting: ${soak.fatal}`);
    seeder = await startQbittorrent({
      name: 'qbittorrent-seeder',
      profileDir: path.join(stateDir, 'seeder'),
      logDir: path.join(stateDir, 'logs'),
      say,
    });
    const seeded = await seedTorrents(seeder, path.join(stateDir, 'seeder'));
    const qbt = stack.services.find((s) => s.name === 'qbittorrent-nox');
    if (!qbt) throw new Error('the stack runs no qbittorrent-nox');
    const freshClient = () =>
      new QbtSession(qbt.url, stack.env.TORRENT_CLIENT_USERNAME, stack.env.TORRENT_CLIENT_PASSWORD);
    const client = freshClient();
    const s = seeder;
    return Object.assign(soak, {
      stack,
      httpUrl: `http://127.0.0.1:${httpPort}`,
      lambdaUrl: `http://127.0.0.1:${lambdaPort}`,
      seeder: s,
      seeded,
      client,
      freshClient,
      async stop() {
        await s.stop();
        await stack.stop();
      },
    }) as SoakStack;
  } catch (err) {
    await seeder?.stop();
    await stack.stop();
    throw err;
  }
}

/** Two small random files per kind, seeded: magnets naming the seeder as their peer (x.pe). */
async function seedTorrents(seeder: RunningQbittorrent, dir: string) {
  const files = path.join(dir, 'files');
  fs.mkdirSync(files, { recursive: true });
  const session = QbtSession.of(seeder);
  const out: Array<MadeTorrent & { magnet: string }> = [];
  for (const kind of TORRENT_KINDS)
    for (let i = 0; i < 2; i++) {
      const file = path.join(files, `soak-${kind}-${i}-${randomBytes(4).toString('hex')}.bin`);
      fs.writeFileSync(file, randomBytes(256 * 1024));
      const made = makeTorrent(file, kind, `${file}.torrent`);
      await session.seed(made.torrentFile, files, clientIdOf(made));
      out.push({ ...made, magnet: magnetOf(made, { peers: [`127.0.0.1:${seeder.torrentPort}`] }) });
    }
  return out;
}
