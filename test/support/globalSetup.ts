import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../emulator/stack/ports';
import { startStack, Stack } from '../../emulator/stack/stack';

/**
 * One real stack for the whole jest run: DynamoDB Local, s3rver, nats-server
 * and `serverless offline` on free ports, stage `test`. Its environment is
 * written to a file that every test worker loads (test/support/env.ts).
 */

export const ROOT = path.resolve(__dirname, '..', '..');

declare global {
  // eslint-disable-next-line no-var
  var __STACK__: { stack: Stack; stateDir: string } | undefined;
}

export default async function globalSetup(): Promise<void> {
  const stateDir = path.join(ROOT, '.stack', `test-${process.pid}`);
  fs.rmSync(stateDir, { recursive: true, force: true });
  const began = Date.now();
  const [httpPort, lambdaPort] = [await freePort(), await freePort()];
  // Tests drive every tick themselves; offline's wall-clock schedules would race them.
  process.env.SCHEDULES_ENABLED = 'false';
  const stack = await startStack({
    root: ROOT,
    stateDir,
    stage: 'test',
    httpPort,
    lambdaPort,
    say: (line) => process.stdout.write(`[test-stack] ${line}\n`),
  });
  const env = {
    ...stack.env,
    TEST_HTTP_URL: `http://127.0.0.1:${httpPort}`,
    TEST_LAMBDA_URL: `http://127.0.0.1:${lambdaPort}`,
    TEST_STATE_DIR: stateDir,
  };
  fs.writeFileSync(path.join(stateDir, 'env.json'), JSON.stringify(env));
  fs.writeFileSync(path.join(stateDir, 'definition.json'), JSON.stringify(stack.definition));
  process.env.TEST_STACK_ENV_FILE = path.join(stateDir, 'env.json');
  globalThis.__STACK__ = { stack, stateDir };
  process.stdout.write(`[test-stack] ready in ${((Date.now() - began) / 1000).toFixed(1)} s (logs: ${stateDir}/logs)\n`);
}
