import { CliArgs, cliSpec, parseCli, UsageError } from '../cli/run';

/** `npm run soak` flags: parsed strictly, a bad one is a clear error before anything starts. */

export interface SoakArgs {
  minutes: number;
  seed: number;
  chaos: boolean;
  /** The scan functions' hot folder: a Samba share (smbd among the faults) or the folder itself. */
  hotFolder: 'smb' | 'local';
  json?: string;
  help: boolean;
}

export const USAGE = `usage: npm run soak -- [--minutes N] [--seed N] [--no-chaos] [--hotfolder smb|local] [--json <path>] [--help]
  --minutes N     how long the load and the faults run (default 10; 60 for the long run), then drain and audit
  --seed N        the seed of every random choice (load mix, fault order and lengths); default: from the clock
  --no-chaos      load only, no injected faults
  --hotfolder smb|local   the scan hot folder behind a Samba share of ours (smbd among the faults; needs root,
                  the default as root) or the folder itself (the default otherwise)
  --json <path>   also write the report as JSON to <path>
The stack starts as npm start starts it (schedules on, the real qbittorrent-nox), on free ports.`;

/** The soak's flags for the one CLI parser (tools/cli/run.ts): --help, unknown flags and missing values as every tool. */
export const SOAK_CLI = cliSpec({
  usage: USAGE,
  options: {
    minutes: { type: 'string' },
    seed: { type: 'string' },
    'no-chaos': { type: 'boolean' },
    hotfolder: { type: 'string' },
    json: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

export { UsageError };

/** The parsed flags, checked: a bad value is a UsageError naming it, before anything starts. */
export function soakArgs(
  values: CliArgs<typeof SOAK_CLI.options>['values'],
  now = Date.now(),
  root = process.getuid?.() === 0,
): SoakArgs {
  const out: SoakArgs = {
    minutes: 10,
    seed: now % 2 ** 31,
    chaos: !values['no-chaos'],
    hotFolder: root ? 'smb' : 'local',
    help: !!values.help,
  };
  if (values.hotfolder !== undefined) {
    if (values.hotfolder !== 'smb' && values.hotfolder !== 'local')
      throw new UsageError(`--hotfolder must be smb or local, got ${JSON.stringify(values.hotfolder)}`);
    if (values.hotfolder === 'smb' && !root)
      throw new UsageError('--hotfolder smb needs root (the soak runs a Samba share of its own)');
    out.hotFolder = values.hotfolder;
  }
  if (values.minutes !== undefined) {
    const v = values.minutes;
    const n = Number(v);
    if (!/^\d+(\.\d+)?$/.test(v) || n <= 0 || n > 24 * 60)
      throw new UsageError(`--minutes must be a number of minutes in (0, 1440], got ${JSON.stringify(v)}`);
    out.minutes = n;
  }
  if (values.seed !== undefined) {
    if (!/^\d{1,10}$/.test(values.seed))
      throw new UsageError(`--seed must be a whole number, got ${JSON.stringify(values.seed)}`);
    out.seed = Number(values.seed) % 2 ** 31;
  }
  if (values.json !== undefined) out.json = values.json;
  return out;
}

/** argv → the checked flags (what the entry does through runCli; the unit test calls it directly). */
export function parseArgs(argv: readonly string[], now = Date.now(), root?: boolean): SoakArgs {
  return soakArgs(parseCli(SOAK_CLI, [...argv]).values, now, root);
}

/** A small seeded generator (mulberry32): the same seed gives the same load mix and fault schedule. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
  };
}

export interface Random {
  next(): number;
  /** A whole number in [lo, hi]. */
  int(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}
