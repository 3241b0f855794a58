import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, httpAnswers } from './ports';
import { RunningService, startProcess } from './process';
import type { ServiceContext } from './services';

/**
 * Emulators of the systems around us (scanner, torrent client, brokerage API),
 * started by the stack after the resources exist. Each contributes the
 * environment the service needs to reach it.
 */
export interface EmulatorSpec {
  name: string;
  /** No service when the real system is configured instead (the T-Bank API given by TBANK_API_URL). */
  start(ctx: ServiceContext, env: Record<string, string>): Promise<{ service?: RunningService; env: Record<string, string> }>;
}

/** Runs a TypeScript entry point of emulator/ as its own process. */
export function tsProcess(ctx: ServiceContext, name: string, entry: string, env: Record<string, string>, url: string, ready: () => Promise<boolean>) {
  return startProcess({
    name,
    command: process.execPath,
    args: [require.resolve('tsx/cli'), path.join(__dirname, '..', '..', 'emulator', entry)],
    env: { ...process.env, ...env },
    logFile: path.join(ctx.logDir, `${name}.log`),
    url,
    ready,
  });
}

const qbittorrent: EmulatorSpec = {
  name: 'qbittorrent',
  async start(ctx) {
    const port = await freePort(8080);
    const url = `http://127.0.0.1:${port}`;
    // A fresh password per run: nothing in the repo or the logs is a usable credential.
    const env = { TORRENT_CLIENT_URL: url, TORRENT_CLIENT_USERNAME: 'admin', TORRENT_CLIENT_PASSWORD: randomBytes(12).toString('hex') };
    const service = await tsProcess(ctx, 'qbittorrent-emulator', 'qbittorrent/main.ts', { ...env, PORT: String(port) }, url, () =>
      httpAnswers(`${url}/emulator/torrents`),
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
    const service = await tsProcess(ctx, 'brokerage-emulator', 'brokerage/main.ts', { PORT: String(port), BROKERAGE_RATE_WINDOW_MS: windowMs }, url, () =>
      httpAnswers(`${url}/emulator/faults`),
    );
    return { service, env: { TBANK_API_URL: url, TBANK_RATE_WINDOW_MS: windowMs } };
  },
};

const scanner: EmulatorSpec = {
  name: 'scanner',
  async start(ctx) {
    // The hot folder: Input/ is the scanning system's, so the emulator's side creates it.
    const root = path.join(path.dirname(ctx.logDir), 'hotfolder');
    fs.mkdirSync(path.join(root, 'Input'), { recursive: true });
    const env = { SCAN_HOTFOLDER_ROOT: root };
    const service = await tsProcess(ctx, 'scanner-emulator', 'scanner/main.ts', { ...env, SCAN_EMULATOR_DELAY: process.env.SCAN_EMULATOR_DELAY ?? '500' }, root, async () =>
      fs.readFileSync(path.join(ctx.logDir, 'scanner-emulator.log'), 'utf8').includes('watching'),
    );
    return { service, env };
  },
};

export const emulators: EmulatorSpec[] = [qbittorrent, brokerage, scanner];
