import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../../lib/config/errors';
import { cliSpec, runCli } from '../cli/run';
import { firstRunLines } from './first-run';
import { startStack, Stack } from './stack';

export const START_CLI = cliSpec({
  usage: `usage: npm start

The whole service on the embedded stack, no Docker, no cloud: DynamoDB Local, S3,
NATS, serverless offline and an emulator for each outside system. Prints where each
one runs, an API token, and a line to try each domain; writes .stack/env for other
shells. Ctrl-C stops everything it started.

  --help  this text

Environment (docs/configuration.md):
  STACK=localstack              uses LocalStack (localstack/docker-compose.yml)
  STACK_DATA_DIR=dir            keeps DynamoDB's and S3's data across runs (default: both start empty)
  NATS_TRIGGER=connector        bridges NATS with the cloud connector process instead of offline's plugin
  STACK_TORRENT_CLIENT=emulator the qBittorrent emulator instead of a real qbittorrent-nox
  STACK_HOTFOLDER=smb           the scan hot folder behind a Samba share of ours (needs root)
  QBT_PUBLIC_SWARM=true         opens the real client's swarm to the internet (closed by default)
  TORRENT_CLIENT_URL + TORRENT_CLIENT_PASSWORD (or TORRENT_CLIENT_API_KEY)   your own qBittorrent
  TBANK_API_URL=https://…       the real T-Bank API instead of its emulator
  TELEGRAM_BOT_TOKEN + TELEGRAM_WEBHOOK_SECRET + TELEGRAM_CHAT_IDS   your own bot
  HTTP_PORT (3000), LAMBDA_PORT (3002), STACK_READY_TIMEOUT_MS (120000)
Exit 0 stopped by Ctrl-C, 1 a service failed, 2 bad usage or settings.`,
  options: {},
});

/**
 * `npm start`: the whole service on the embedded stack, no Docker, no cloud.
 *   STACK=localstack npm start   uses LocalStack (localstack/docker-compose.yml)
 *   STACK_DATA_DIR=dir           keeps DynamoDB's and S3's data across runs (default: both start empty)
 *   NATS_TRIGGER=connector       bridges NATS with the cloud connector process instead of offline's plugin
 *   STACK_TORRENT_CLIENT=emulator the qBittorrent emulator instead of a real qbittorrent-nox (the default)
 *   STACK_HOTFOLDER=smb          the scan hot folder behind a Samba share of ours (needs root; default: the folder)
 *   QBT_PUBLIC_SWARM=true        opens the real client's swarm to the internet (closed by default: loopback only)
 *   TORRENT_CLIENT_URL + TORRENT_CLIENT_PASSWORD (or TORRENT_CLIENT_API_KEY)
 *                                your own qBittorrent instead of ours (checked at start)
 *   QBT_EMULATOR_PROFILE=4.6|5.1|5.2  which qBittorrent the emulator plays (default 5.1)
 *   STACK_READY_TIMEOUT_MS=ms    how long serverless offline may take to come up (default 120000)
 * Writes .stack/env (the endpoints, for other terminals) and stops everything
 * it started on Ctrl-C.
 */

const root = path.resolve(__dirname, '..', '..');
const stateDir = path.join(root, '.stack');
const say = (line: string) => process.stdout.write(`[stack] ${line}\n`);

async function main(): Promise<number> {
  const began = Date.now();
  const localstack = process.env.STACK === 'localstack';
  if (process.env.STACK && !localstack)
    throw new ConfigError([`STACK must be 'localstack' or unset, got ${JSON.stringify(process.env.STACK)}`]);
  const natsTrigger = process.env.NATS_TRIGGER || 'plugin';
  if (natsTrigger !== 'plugin' && natsTrigger !== 'connector')
    throw new ConfigError([`NATS_TRIGGER must be 'plugin' or 'connector', got ${JSON.stringify(natsTrigger)}`]);
  const edge = process.env.LOCALSTACK_URL ?? 'http://127.0.0.1:4566';

  let stack: Stack | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const order = [...(stack?.services ?? [])].reverse();
    say(`${signal}: stopping ${order.map((s) => `${s.name} (pid ${s.pid})`).join(', ') || 'nothing'}`);
    await stack?.stop();
    say('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  fs.rmSync(path.join(stateDir, 'logs'), { recursive: true, force: true });
  stack = await startStack({
    root,
    stateDir,
    preferredPorts: { dynamodb: 8000, s3: 4569, nats: 4222 },
    httpPort: Number(process.env.HTTP_PORT ?? 3000),
    lambdaPort: Number(process.env.LAMBDA_PORT ?? 3002),
    external: localstack
      ? { dynamodb: edge, s3: edge, nats: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' }
      : { nats: process.env.NATS_URL },
    dataDir: process.env.STACK_DATA_DIR ? path.resolve(process.env.STACK_DATA_DIR) : undefined,
    natsTrigger,
    useExternal: true,
    say,
    // The stack has stopped itself and said which service died and where its log is.
    onFatal: () => process.exit(1),
  });
  if (stopping) return new Promise<number>(() => {});

  const api = stack.services.find((s) => s.name === 'serverless-offline')?.url;
  const envFile = path.join(stateDir, 'env');
  // Grants and keys stay with the functions; the API token is for this user's shells only (0600).
  const shared: Record<string, string> = { ...stack.env };
  delete shared.AUTH_TOKENS;
  delete shared.SYNC_TOKEN_KEYS;
  delete shared.SESSION_KEYS;
  if (stack.devToken) shared.API_TOKEN = stack.devToken;
  if (api) shared.API_URL = api;
  fs.writeFileSync(
    envFile,
    Object.entries(shared)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
    { mode: 0o600 },
  );
  fs.chmodSync(envFile, 0o600);
  say(`ready in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  say(`  DynamoDB   ${stack.env.AWS_ENDPOINT_URL_DYNAMODB}`);
  say(`  S3         ${stack.env.AWS_ENDPOINT_URL_S3}   (bucket ${stack.env.BUCKET_FILES})`);
  say(`  NATS       ${stack.env.NATS_URL}`);
  for (const service of stack.services)
    say(`  ${service.name.padEnd(20)} ${service.url}  pid ${service.pid}  log ${path.relative(root, service.logFile)}`);
  const qbt = stack.services.find((s) => s.name === 'qbittorrent-nox');
  if (qbt)
    say(
      `  qBittorrent WebUI ${qbt.url}/   (user ${stack.env.TORRENT_CLIENT_USERNAME}, password ${stack.env.TORRENT_CLIENT_PASSWORD}; a magnet to try: npm run torrent:seed -- <file>)`,
    );
  say(
    `  health     curl -s -H "Authorization: Bearer $API_TOKEN" ${api}/healthcheck/deep   (public liveness: /healthcheck)`,
  );
  say(`  web UI     ${api}/   (sign in with an API token)`);
  say(`  env        ${path.relative(root, envFile)} (source it to reach this stack from another shell)`);
  if (stack.devToken) {
    say(
      `  API token  ${stack.devToken}   (all scopes, this session only; also API_TOKEN in ${path.relative(root, envFile)})`,
    );
    say(`  try        curl -s -H "Authorization: Bearer $API_TOKEN" ${api}/downloads`);
  }
  // One line per domain to try (sync:demo needs API_TOKEN: yours, when AUTH_TOKENS is given).
  if (api)
    for (const line of firstRunLines({
      api,
      tbankEmulator: stack.services.some((s) => s.name === 'brokerage-emulator'),
    }))
      say(line);
  const telegram = stack.services.find((s) => s.name === 'telegram-emulator');
  if (telegram) {
    const [chat] = stack.env.TELEGRAM_CHAT_IDS.split(',');
    const user = stack.env.TELEGRAM_ALLOWED_USER_IDS.split(',')[0];
    say(
      `  telegram   the bot talks to the emulator at ${telegram.url} (chats ${stack.env.TELEGRAM_CHAT_IDS}, user ${user}):`,
    );
    say(
      `             type:  curl -s -XPOST ${telegram.url}/emulator/type -d '{"chat_id":${chat},"user_id":${user},"text":"/help"}'`,
    );
    say(`             read:  curl -s '${telegram.url}/emulator/messages?chat_id=${chat}'`);
    say(
      `             press: curl -s -XPOST ${telegram.url}/emulator/press -d '{"chat_id":${chat},"user_id":${user},"message_id":1,"data":"v1:o:<id>"}'`,
    );
  }
  say('Ctrl-C stops everything');
  return new Promise<number>(() => {}); // runs until Ctrl-C (shutdown exits)
}

// A service that failed to start has said which and where its log is: its message, exit 1.
if (require.main === module) runCli(START_CLI, main, { expected: [ConfigError], crash: { code: 1, stack: false } });
