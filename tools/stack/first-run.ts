/**
 * What `npm start` prints to try each domain, as data: the stack test
 * (test/e2e/first-run.test.ts) runs these very commands against its stack.
 */

/** A shipped sample the scanner emulator answers (fixtures/ocr/README.md). */
export const SCAN_SAMPLE = 'fixtures/ocr/inputs/aep_3.pdf';

export const FIRST_RUN_COMMANDS = {
  scan: ['npm', 'run', 'scan', '--', SCAN_SAMPLE],
  sync: ['npm', 'run', 'sync:demo'],
} as const;

export function firstRunLines(o: { api: string; tbankEmulator: boolean }): string[] {
  const scan = FIRST_RUN_COMMANDS.scan.join(' ');
  const sync = FIRST_RUN_COMMANDS.sync.join(' ');
  return [
    `  scan       ${scan}   (a shipped sample; its job shows at ${o.api}/scan)`,
    o.tbankEmulator
      ? `  sync       ${sync}   (a demo account on the T-Bank emulator; its attempt shows at ${o.api}/sync within a minute)`
      : `  sync       POST /sync/connections with your T-Bank token (docs/sync.md); npm run tbank:check tries one first`,
  ];
}
