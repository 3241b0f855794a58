import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, httpAnswers } from '../../tools/stack/ports';
import { RunningService, startProcess } from '../../tools/stack/process';

/**
 * moto's server (`pip install 'moto[server]'`: `moto_server`) on a free
 * loopback port, for the ops tools' tests: its SQS stands in for the
 * async-failure queue. One process per test file; `stop()` ends it by its
 * process group. Minimal on purpose: the lead merges it with the deploy
 * test's starter (test/support/moto.ts) into one.
 */

export interface Moto {
  url: string;
  stop(): Promise<void>;
}

/** The moto_server on PATH, or why there is none. */
export function motoServerBinary(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v moto_server'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error("moto_server is not installed: pip install 'moto[server]'");
  }
}

export async function startMoto(name = 'moto-ops'): Promise<Moto> {
  const command = motoServerBinary();
  const port = await freePort();
  const logDir = process.env.TEST_STATE_DIR ? path.join(process.env.TEST_STATE_DIR, 'logs') : os.tmpdir();
  fs.mkdirSync(logDir, { recursive: true });
  const url = `http://127.0.0.1:${port}`;
  const service: RunningService = await startProcess({
    name,
    command,
    args: ['-H', '127.0.0.1', '-p', String(port)],
    logFile: path.join(logDir, `${name}-${port}.log`),
    url,
    // moto answers its own health path; any HTTP answer means the server is up.
    ready: () => httpAnswers(`${url}/moto-api/`),
    readyTimeoutMs: 30_000,
  });
  return { url, stop: () => service.stop() };
}
