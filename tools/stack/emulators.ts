import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadTorrentClientConfig, torrentClientConfigured } from '../../lib/torrents/config';
import { silentLogger } from '../../lib/log';
import { torrentClientFor } from '../../lib/torrents/qbittorrent';
import { freePort, httpAnswers } from './ports';
import { RunningService, startProcess } from './process';
import { startQbittorrent } from './qbittorrent';
import { startHotFolderShare } from './samba';
import type { ServiceContext } from './services';

/**
 * Emulators of the systems around us (scanner, torrent client, brokerage API),
 * started by the stack after the resources exist. Each contributes the
 * environment the service needs to reach it.
 */
export interface EmulatorSpec {
  name: string;
  /** When the real system is configured: check it, say what was found, and start no emulator. */
  external?(ctx: ServiceContext, env: NodeJS.ProcessEnv): Promise<boolean>;
  /** No service when the real system is configured instead (the T-Bank API given by TBANK_API_URL). */
  start(
    ctx: ServiceContext,
    env: Record<string, string>,
  ): Promise<{ service?: RunningService; env: Record<string, string> }>;
}

/** Runs a TypeScript entry point of emulator/ as its own process. */
export function tsProcess(
  ctx: ServiceContext,
  name: string,
  entry: string,
  env: Record<string, string>,
  url: string,
  ready: () => Promise<boolean>,
  port?: number,
) {
  return startProcess({
    name,
    command: process.execPath,
    args: [require.resolve('tsx/cli'), path.join(__dirname, '..', '..', 'emulator', entry)],
    env: { ...process.env, ...env },
    logFile: path.join(ctx.logDir, `${name}.log`),
    url,
    ready,
    port,
  });
}

/**
 * The user's own qBittorrent (TORRENT_CLIENT_URL + password or API key):
 * version and login are checked now, so a wrong setting shows at start
 * rather than as poll errors a minute later. A failed check is said plainly
 * and the stack goes on (the client may come up later).
 */
export async function checkTorrentClient(env: NodeJS.ProcessEnv, say: (line: string) => void): Promise<boolean> {
  let cfg;
  try {
    cfg = loadTorrentClientConfig(env);
  } catch (err) {
    say(`torrent client: settings refused: ${err instanceof Error ? err.message : String(err)}`);
    return false;
  }
  const client = torrentClientFor(cfg, silentLogger);
  const how = cfg.auth.kind === 'apiKey' ? 'API key' : `user ${cfg.auth.username}`;
  try {
    const webapi = await client.webapiVersion();
    const snapshot = await client.snapshot();
    say(
      `torrent client: ${cfg.url} (your own, no emulator): Web API ${webapi}, ${how} accepted, ${snapshot.present.length} torrents in ${cfg.adoptAllCategories ? 'all categories' : `category ${cfg.category}`}`,
    );
    return true;
  } catch (err) {
    say(
      `torrent client: ${cfg.url} (your own, no emulator) FAILED the check with ${how}: ${err instanceof Error ? err.message : String(err)}`,
    );
    return false;
  }
}

/**
 * Which torrent client the stack runs (STACK_TORRENT_CLIENT): `qbittorrent`
 * (default), Debian's qbittorrent-nox with a profile under .stack/, or
 * `emulator` (fault injection, the 4.6/5.1/5.2 profiles; the stack tests run it).
 */
export function stackTorrentClient(env: NodeJS.ProcessEnv = process.env): 'qbittorrent' | 'emulator' {
  const chosen = env.STACK_TORRENT_CLIENT?.trim() || 'qbittorrent';
  if (chosen !== 'qbittorrent' && chosen !== 'emulator')
    throw new Error(`STACK_TORRENT_CLIENT must be 'qbittorrent' or 'emulator', got ${JSON.stringify(chosen)}`);
  return chosen;
}

const qbittorrent: EmulatorSpec = {
  name: 'qbittorrent',
  async external(ctx, env) {
    if (!torrentClientConfigured(env)) return false;
    await checkTorrentClient(env, ctx.say);
    return true;
  },
  async start(ctx) {
    const port = await freePort(8080);
    const url = `http://127.0.0.1:${port}`;
    // A fresh password per run: nothing in the repo or the logs is a usable credential.
    const env = {
      TORRENT_CLIENT_URL: url,
      TORRENT_CLIENT_USERNAME: 'admin',
      TORRENT_CLIENT_PASSWORD: randomBytes(12).toString('hex'),
      TORRENT_CLIENT_API_KEY: '',
    };
    if (stackTorrentClient() === 'qbittorrent') {
      const dataDir = process.env.STACK_DATA_DIR?.trim();
      const publicSwarm = process.env.QBT_PUBLIC_SWARM === 'true';
      const client = await startQbittorrent({
        name: 'qbittorrent-nox',
        // With STACK_DATA_DIR its torrents persist like the tables that name them; otherwise both start empty.
        profileDir: dataDir
          ? path.join(path.resolve(dataDir), 'qbittorrent')
          : path.join(path.dirname(ctx.logDir), 'qbittorrent'),
        keepTorrents: !!dataDir,
        logDir: ctx.logDir,
        webuiPort: port,
        username: env.TORRENT_CLIENT_USERNAME,
        password: env.TORRENT_CLIENT_PASSWORD,
        publicSwarm,
        say: ctx.say,
      });
      ctx.say(
        `torrent client: qbittorrent-nox at ${url} (user admin, password TORRENT_CLIENT_PASSWORD in .stack/env), ` +
          (publicSwarm
            ? 'PUBLIC swarm (QBT_PUBLIC_SWARM=true): DHT, LSD and PeX on, any interface'
            : `closed swarm: bound to lo, DHT, LSD and PeX off; peers by hand (npm run torrent:seed)`),
      );
      return { service: client, env };
    }
    const profile = process.env.QBT_EMULATOR_PROFILE ?? '';
    const service = await tsProcess(
      ctx,
      'qbittorrent-emulator',
      'qbittorrent/main.ts',
      { ...env, PORT: String(port), QBT_EMULATOR_PROFILE: profile },
      url,
      () => httpAnswers(`${url}/emulator/torrents`),
      port,
    );
    return { service, env };
  },
};

/**
 * The T-Bank emulator, unless a real T-Bank base URL is given (TBANK_API_URL:
 * sandbox or production): then the sync talks to it, with the tokens users
 * connect through the API, and no emulator runs. TBANK_RATE_WINDOW_MS scales
 * the emulator's rate-limit window and the client's budget together.
 */
const brokerage: EmulatorSpec = {
  name: 'brokerage',
  async start(ctx) {
    const given = process.env.TBANK_API_URL?.trim();
    if (given) {
      ctx.say(`brokerage: the T-Bank API at ${given} (no emulator)`);
      const env: Record<string, string> = { TBANK_API_URL: given };
      return { env };
    }
    const port = await freePort(8090);
    const url = `http://127.0.0.1:${port}`;
    const windowMs = process.env.TBANK_RATE_WINDOW_MS?.trim() || '60000';
    const service = await tsProcess(
      ctx,
      'brokerage-emulator',
      'brokerage/main.ts',
      { PORT: String(port), BROKERAGE_RATE_WINDOW_MS: windowMs },
      url,
      () => httpAnswers(`${url}/emulator/faults`),
      port,
    );
    return { service, env: { TBANK_API_URL: url, TBANK_RATE_WINDOW_MS: windowMs } };
  },
};

/**
 * How the scan functions reach the stack's hot folder (STACK_HOTFOLDER): `local` (default) the folder itself,
 * `smb` a Samba share of it (needs root), so the SMB path runs locally as against a scanning system's share.
 */
export function stackHotFolder(env: NodeJS.ProcessEnv = process.env): 'local' | 'smb' {
  const chosen = env.STACK_HOTFOLDER?.trim() || 'local';
  if (chosen !== 'local' && chosen !== 'smb')
    throw new Error(`STACK_HOTFOLDER must be 'local' or 'smb', got ${JSON.stringify(chosen)}`);
  return chosen;
}

/** The hot folder: Input/ is the scanning system's, so the emulator's side creates it. Private (0700): it holds users' documents. */
function hotFolderRoot(ctx: ServiceContext): string {
  const root = path.join(path.dirname(ctx.logDir), 'hotfolder');
  fs.mkdirSync(path.join(root, 'Input'), { recursive: true, mode: 0o700 });
  fs.chmodSync(root, 0o700);
  return root;
}

const hotFolderShare: EmulatorSpec = {
  name: 'smbd',
  async start(ctx) {
    if (stackHotFolder() !== 'smb') return { env: {} };
    const root = hotFolderRoot(ctx);
    const share = await startHotFolderShare({
      stateDir: path.dirname(ctx.logDir),
      root,
      logDir: ctx.logDir,
      say: ctx.say,
    });
    ctx.say(
      `scan hot folder: ${share.env.SCAN_HOTFOLDER_PATH} (Samba on port ${share.env.SCAN_SMB_PORT}, user root, STACK_HOTFOLDER=smb), the folder ${root}`,
    );
    return share;
  },
};

const scanner: EmulatorSpec = {
  name: 'scanner',
  async start(ctx, stackEnv) {
    const root = hotFolderRoot(ctx);
    const service = await tsProcess(
      ctx,
      'scanner-emulator',
      'scanner/main.ts',
      // The design's name for its folder; a share's settings in the shell are not the emulator's (empty is unset).
      {
        SCAN_HOTFOLDER_PATH: root,
        SCAN_HOTFOLDER_ROOT: '',
        SCAN_HOTFOLDER_MODE: '',
        SCAN_EMULATOR_DELAY: process.env.SCAN_EMULATOR_DELAY ?? '500',
      },
      root,
      async () => fs.readFileSync(path.join(ctx.logDir, 'scanner-emulator.log'), 'utf8').includes('watching'),
    );
    // Behind a share the functions get the share's settings (hotFolderShare), not the folder.
    const env: Record<string, string> = stackEnv.SCAN_HOTFOLDER_MODE === 'smb' ? {} : { SCAN_HOTFOLDER_ROOT: root };
    return { service, env };
  },
};

/**
 * The Telegram Bot API emulator, unless a real bot token is configured. A
 * token and webhook secret made per run; the webhook points at offline's
 * /telegram/webhook as if setWebhook had been called. Chats and the allowed
 * user are the configured ones, else two group chats and one user.
 */
const telegram: EmulatorSpec = {
  name: 'telegram',
  async start(ctx) {
    const port = await freePort(8081);
    const url = `http://127.0.0.1:${port}`;
    const env = {
      TELEGRAM_BOT_TOKEN: `${7_000_000_001}:${randomBytes(24).toString('base64url')}`,
      TELEGRAM_WEBHOOK_SECRET: randomBytes(24).toString('base64url'),
      TELEGRAM_API_ROOT: url,
      TELEGRAM_CHAT_IDS: process.env.TELEGRAM_CHAT_IDS?.trim() || '-1001001,-1001002',
      TELEGRAM_ALLOWED_USER_IDS: process.env.TELEGRAM_ALLOWED_USER_IDS?.trim() || '4242',
      // Telegram's rates sped up (a group 600/min instead of 20), for the notifier and the emulator alike:
      // a burst test takes seconds, the pacing and the 429s are the same code (docs/telegram.md).
      TELEGRAM_CHAT_GAP_MS: '50',
      TELEGRAM_GROUP_PER_MINUTE: '600',
      TELEGRAM_BOT_PER_SECOND: '60',
    };
    const webhook = `${ctx.httpUrl ?? 'http://127.0.0.1:3000'}/telegram/webhook`;
    const service = await tsProcess(
      ctx,
      'telegram-emulator',
      'telegram/main.ts',
      {
        ...env,
        TELEGRAM_WEBHOOK_URL: webhook,
        PORT: String(port),
        TELEGRAM_EMULATOR_LIMITS: 'chat=20,group=600,bot=60',
      },
      url,
      () => httpAnswers(`${url}/emulator/webhook`),
      port,
    );
    return { service, env };
  },
};

export const emulators: EmulatorSpec[] = [
  qbittorrent,
  brokerage,
  hotFolderShare,
  scanner,
  ...(process.env.TELEGRAM_BOT_TOKEN?.trim() ? [] : [telegram]),
];
