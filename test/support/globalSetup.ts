import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../tools/stack/ports';
import { startStack, Stack } from '../../tools/stack/stack';
import { grantJson, newToken, SCOPES } from '../../lib/auth/tokens';

/**
 * One real stack for the whole jest run: DynamoDB Local, s3rver, nats-server
 * and `serverless offline` on free ports, stage `test`. Its environment is
 * written to a file that every test worker loads (test/support/env.ts).
 */

export const ROOT = path.resolve(__dirname, '..', '..');

declare global {
  var __STACK__: { stack: Stack; stateDir: string } | undefined;
}

export default async function globalSetup(): Promise<void> {
  const stateDir = path.join(ROOT, '.stack', `test-${process.pid}`);
  fs.rmSync(stateDir, { recursive: true, force: true });
  const began = Date.now();
  const [httpPort, lambdaPort] = [await freePort(), await freePort()];
  // Tests drive every tick themselves; offline's wall-clock schedules would race them.
  process.env.SCHEDULES_ENABLED = 'false';
  // The T-Bank rate limits' "minute" is 2 s here (emulator and client alike), and a 10-year history makes one
  // user's sync need more than 200 Operations calls in it: the pacing is exercised by every e2e sync.
  process.env.TBANK_RATE_WINDOW_MS = '2000';
  process.env.SYNC_HISTORY_DAYS = '3650';
  delete process.env.TBANK_API_URL; // the tests always run against the emulator
  // The service's torrent client is the emulator (faults, profiles); the real-client tests start their own
  // qbittorrent-nox and route the emulator to it (test/e2e/real-qbittorrent.test.ts).
  process.env.STACK_TORRENT_CLIENT = 'emulator';
  // The scan tests through the stack read documents: the content-ai normaliser, opt-in since the default became
  // the contract's slice 0 (NOT_IMPLEMENTED, decision 295; its default is tested in test/unit/scan/config.test.ts).
  process.env.SCAN_NORMALIZER = 'content-ai';
  // The stack shows times in Moscow (the README's example) while the browser tests run their Chromium in other
  // zones: a page that leaned on the browser's or the process's zone would show it.
  process.env.UI_TIME_ZONE = 'Europe/Moscow';
  // One token per shape the tests need; the stack sees only their hashes.
  const tokens = {
    TEST_TOKEN_ALL: newToken(),
    TEST_TOKEN_DOWNLOADS_READ: newToken(),
    TEST_TOKEN_SYNC_READ: newToken(),
    TEST_TOKEN_SCAN_READ: newToken(),
    TEST_TOKEN_HEALTH_READ: newToken(),
    TEST_TOKEN_EXPIRED: newToken(),
  };
  const grants = [
    grantJson('test-all', tokens.TEST_TOKEN_ALL, SCOPES),
    grantJson('test-downloads-read', tokens.TEST_TOKEN_DOWNLOADS_READ, ['downloads:read']),
    grantJson('test-sync-read', tokens.TEST_TOKEN_SYNC_READ, ['sync:read']),
    grantJson('test-scan-read', tokens.TEST_TOKEN_SCAN_READ, ['scan:read']),
    grantJson('test-health-read', tokens.TEST_TOKEN_HEALTH_READ, ['health:read']),
    grantJson('test-expired', tokens.TEST_TOKEN_EXPIRED, SCOPES, Date.now() - 60_000),
  ];
  const stack = await startStack({
    authTokens: JSON.stringify(grants),
    root: ROOT,
    stateDir,
    stage: 'test',
    httpPort,
    lambdaPort,
    // The cloud path: NATS reaches the functions through the connector process, as on AWS (TEST_NATS_TRIGGER=plugin for offline's plugin).
    natsTrigger: process.env.TEST_NATS_TRIGGER === 'plugin' ? 'plugin' : 'connector',
    // Also kept in stack.log: tests read what the supervisor said (restarts, fatal stops).
    say: (line) => {
      process.stdout.write(`[test-stack] ${line}\n`);
      fs.appendFileSync(path.join(stateDir, 'stack.log'), line + '\n');
    },
  });
  const env = {
    ...stack.env,
    TEST_HTTP_URL: `http://127.0.0.1:${httpPort}`,
    TEST_LAMBDA_URL: `http://127.0.0.1:${lambdaPort}`,
    TEST_STATE_DIR: stateDir,
    // Process-group leaders of the stack's services, by name: tests inject faults (SIGSTOP) and list sockets with them.
    TEST_STACK_PIDS: JSON.stringify(Object.fromEntries(stack.services.map((s) => [s.name, s.pid]))),
    ...tokens,
  };
  fs.writeFileSync(path.join(stateDir, 'env.json'), JSON.stringify(env));
  fs.writeFileSync(path.join(stateDir, 'definition.json'), JSON.stringify(stack.definition));
  process.env.TEST_STACK_ENV_FILE = path.join(stateDir, 'env.json');
  globalThis.__STACK__ = { stack, stateDir };
  process.stdout.write(
    `[test-stack] ready in ${((Date.now() - began) / 1000).toFixed(1)} s (logs: ${stateDir}/logs)\n`,
  );
}
