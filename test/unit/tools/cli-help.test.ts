import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Every command-line tool, found rather than listed: each package.json script
 * that runs `tsx <file>`, and each file under tools/ or bench/ that enters
 * through runCli. Each answers --help with its usage (exit 0), an unknown flag
 * with what is wrong and its usage (exit 2), and a missing setting with the
 * setting's name (exit 2), never with a stack trace.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

interface Cli {
  /** How a person runs it: `npm run x`, `npm start`, or `npx tsx <file>` for the few without a script. */
  name: string;
  file: string;
}

function walk(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .filter((f) => f.endsWith('.ts'));
}

const scripted: Cli[] = Object.entries(pkg.scripts).flatMap(([name, command]) => {
  const m = /^tsx (\S+\.ts)$/.exec(command);
  return m ? [{ name: name === 'start' ? 'npm start' : `npm run ${name}`, file: m[1] }] : [];
});
const entries = [...walk('tools'), ...walk('bench')].filter((f) =>
  /\brunCli\(/.test(fs.readFileSync(path.join(ROOT, f), 'utf8')),
);
const CLIS: Cli[] = [
  ...scripted,
  ...entries
    .filter((f) => f !== path.join('tools', 'cli', 'run.ts') && !scripted.some((s) => s.file === f))
    .map((f) => ({ name: `npx tsx ${f}`, file: f })),
];

/**
 * A missing setting, per tool: the arguments that get past the parser and the
 * setting it then names; null where a tool needs no setting of its own (its
 * defaults reach a target, or it needs none). A new CLI must be classified here.
 */
const MISSING: Record<string, { args: string[]; env?: Record<string, string>; says: RegExp } | null> = {
  'npm start': { args: [], env: { STACK: 'docker' }, says: /STACK must be 'localstack' or unset/ },
  'npm run setup': null,
  'npm run torrent:seed': null,
  'npm run bench': null,
  'npm run localstack:template': null,
  'npm run scan': { args: ['fixtures/ocr/inputs/aep_3.pdf'], says: /no stack found: run `npm start` first/ },
  'npm run token': null,
  'npm run import:legacy': { args: ['--sqlite', 'x.sqlite'], says: /TABLE_DOWNLOADS is required/ },
  'npm run telegram:webhook': { args: [], says: /TELEGRAM_BOT_TOKEN is required/ },
  'npm run tbank:check': { args: [], says: /TBANK_TOKEN is required/ },
  'npm run sync:reseal': { args: [], says: /TABLE_SYNC is required/ },
  'npm run sync:demo': { args: ['--no-wait'], says: /API_URL is required; API_TOKEN is required/ },
  'npm run ops:replay-failures': null,
  'npm run ops:restore': null,
  'npm run soak': null, // it starts its own stack: no setting is required
  'npm run images:build': null, // it needs root and podman, no setting
  'npm run images:pin': null, // it asks a registry, no setting
  'npx tsx tools/cli/sync-backfill-due.ts': { args: [], says: /TABLE_SYNC is required/ },
};

// A V8 stack frame: "    at fn (file:1:2)" or "    at file:1:2".
const STACK_FRAME = /^\s+at .*:\d+:\d+\)?$/m;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a tool as its script does (Node with tsx), with nothing of this shell's or a running stack's settings. */
function run(file: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', STACK_ENV_FILE: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('every CLI', () => {
  it('is found: the scripts and the entry points without one', () => {
    expect(CLIS.map((c) => c.name)).toEqual(
      expect.arrayContaining(['npm start', 'npm run bench', 'npm run import:legacy', 'npm run ops:restore']),
    );
    expect(CLIS.length).toBeGreaterThanOrEqual(15);
    // Each enters through the one parser: a script that bypasses runCli would answer --help its own way.
    for (const cli of CLIS)
      expect([cli.name, /\brunCli\(/.test(fs.readFileSync(path.join(ROOT, cli.file), 'utf8'))]).toEqual([
        cli.name,
        true,
      ]);
    expect(Object.keys(MISSING).sort()).toEqual(CLIS.map((c) => c.name).sort());
  });

  it.each(CLIS)(
    '$name: --help prints its usage, exit 0; an unknown flag its usage, exit 2',
    async ({ name, file }) => {
      const [help, unknown] = await Promise.all([run(file, ['--help']), run(file, ['--no-such-flag'])]);
      expect([help.code, help.stderr]).toEqual([0, '']);
      expect(help.stdout).toMatch(/^usage: /);
      expect(help.stdout.split('\n')[0]).toContain(name.replace(/^npx tsx /, ''));
      expect(help.stdout).toMatch(/--help/);
      expect(unknown.code).toBe(2);
      expect(unknown.stdout).toBe('');
      expect(unknown.stderr).toMatch(/^unknown option --no-such-flag\n\nusage: /);
      expect(unknown.stderr).not.toMatch(STACK_FRAME);
    },
    120_000,
  );

  it.each(CLIS.filter((c) => MISSING[c.name]))(
    '$name: a missing setting is named, exit 2, no stack',
    async (cli) => {
      const missing = MISSING[cli.name]!;
      const answer = await run(cli.file, missing.args, missing.env);
      expect([answer.code, answer.stdout]).toEqual([2, '']);
      expect(answer.stderr).toMatch(missing.says);
      expect(answer.stderr).not.toMatch(STACK_FRAME);
    },
    60_000,
  );

  it('through npm as a person types it: `npm run bench -- --help` (it used to throw with a stack)', async () => {
    const answer = await new Promise<Run>((resolve, reject) => {
      const child = spawn('npm', ['run', '--silent', 'bench', '--', '--help'], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(answer.code).toBe(0);
    expect(answer.stdout).toMatch(/^usage: npm run bench/);
  }, 60_000);
});
