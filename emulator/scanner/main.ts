import fs from 'node:fs';
import path from 'node:path';
import { hotFolderDirs } from '../../lib/scan/config';
import { EnvReader } from '../../lib/config/env';
import { ConfigError } from '../../lib/config/errors';
import { scanOnce } from './scanner';

/**
 * The scanner emulator as a process. SCAN_HOTFOLDER_PATH (the design's name;
 * SCAN_HOTFOLDER_ROOT is its alias, as for the gateway; the folder must exist),
 * SCAN_INPUT_DIR / SCAN_OUTPUT_DIR / SCAN_TMP_DIR (as the gateway),
 * SCAN_FIXTURES_DIR, SCAN_EMULATOR_DELAY (ms, once per pass),
 * SCAN_EMULATOR_POLL_SECONDS (its own poll interval), SCAN_DONE_RETENTION_SECONDS.
 * Exit code 2: bad settings or a missing root.
 */
const r = new EnvReader(process.env);
// One name or the other; both only when they agree (the gateway's rule, lib/scan/config.ts).
const rootVariable = r.has('SCAN_HOTFOLDER_PATH') ? 'SCAN_HOTFOLDER_PATH' : 'SCAN_HOTFOLDER_ROOT';
const root = r.string(rootVariable, {
  pattern: /^\/(?!\/)/,
  hint: 'an absolute local path (the emulator is the scanner on it)',
});
if (rootVariable === 'SCAN_HOTFOLDER_PATH' && r.has('SCAN_HOTFOLDER_ROOT') && r.string('SCAN_HOTFOLDER_ROOT') !== root)
  r.refuse('SCAN_HOTFOLDER_ROOT', 'differs from SCAN_HOTFOLDER_PATH (the same setting under its older name): give one');
if (r.has('SCAN_HOTFOLDER_MODE'))
  r.string('SCAN_HOTFOLDER_MODE', { pattern: /^local$/, hint: 'local (the emulator reads a local folder)' });
const dirs = hotFolderDirs(r);
const pollMs = r.seconds('SCAN_EMULATOR_POLL_SECONDS', { default: 0.25, min: 0.01, max: 60 });
const delayMs = r.int('SCAN_EMULATOR_DELAY', { default: 500, min: 0, max: 600_000 });
const doneRetentionMs = r.seconds('SCAN_DONE_RETENTION_SECONDS', { default: 86_400, min: 0, max: 365 * 86_400 });
try {
  r.done();
} catch (err) {
  process.stderr.write(`scanner emulator: ${(err as ConfigError).message}\n`);
  process.exit(2);
}
if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) {
  process.stderr.write(
    `scanner emulator: the hot folder root ${root} does not exist (${rootVariable}); create it or point the variable at the share\n`,
  );
  process.exit(2);
}
const options = {
  root,
  dirs,
  fixturesDir: process.env.SCAN_FIXTURES_DIR || path.resolve(__dirname, '../../fixtures/ocr'),
  delayMs,
  doneRetentionMs,
};
let stopping = false;
process.on('SIGTERM', () => (stopping = true));
process.on('SIGINT', () => (stopping = true));
process.stdout.write(`scanner emulator watching ${root}\n`);
void (async () => {
  while (!stopping) {
    try {
      for (const job of await scanOnce(options))
        process.stdout.write(`${JSON.stringify({ event: 'scanner_answered', job_id: job })}\n`);
    } catch (err) {
      process.stderr.write(`${JSON.stringify({ event: 'scanner_pass_failed', message: (err as Error).message })}\n`);
    }
    await new Promise((res) => setTimeout(res, pollMs));
  }
  process.exit(0);
})();
