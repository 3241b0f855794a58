import fs from 'node:fs';
import path from 'node:path';

/**
 * The running `npm start` stack's endpoints (.stack/env) for a CLI, without
 * overriding what the caller's environment already sets: on LocalStack or AWS
 * the environment names the target and no .stack/env is read over it.
 * STACK_ENV_FILE names another file ('' for none: the tests of the CLIs).
 */
export function loadStackEnv(file = process.env.STACK_ENV_FILE ?? path.resolve(__dirname, '../../.stack/env')): void {
  if (!file || !fs.existsSync(file)) return;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && process.env[line.slice(0, eq)] === undefined) process.env[line.slice(0, eq)] = line.slice(eq + 1);
  }
}
