import path from 'node:path';
import { scanOnce } from './scanner';

/** The scanner emulator as a process: SCAN_HOTFOLDER_ROOT, SCAN_FIXTURES_DIR, SCAN_EMULATOR_DELAY (ms). */
const root = process.env.SCAN_HOTFOLDER_ROOT;
if (!root) {
  process.stderr.write('SCAN_HOTFOLDER_ROOT is required\n');
  process.exit(1);
}
const options = {
  root,
  fixturesDir: process.env.SCAN_FIXTURES_DIR ?? path.resolve(__dirname, '../../fixtures/ocr'),
  delayMs: Number(process.env.SCAN_EMULATOR_DELAY ?? 500),
};
let stopping = false;
process.on('SIGTERM', () => (stopping = true));
process.on('SIGINT', () => (stopping = true));
process.stdout.write(`scanner emulator watching ${root}\n`);
(async () => {
  while (!stopping) {
    try {
      for (const job of await scanOnce(options)) process.stdout.write(`${JSON.stringify({ event: 'scanner_answered', job_id: job })}\n`);
    } catch (err) {
      process.stderr.write(`${JSON.stringify({ event: 'scanner_pass_failed', message: (err as Error).message })}\n`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  process.exit(0);
})();
