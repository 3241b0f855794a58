import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { legacyFile, sqliteTime, tableItems } from '../support/legacy';
import { isolatedTable, stackClients } from '../support/stack';

/**
 * The operator's path, as docs/downloads.md gives it, on a production
 * install: the repository's files in a fresh directory (no node_modules),
 * `npm ci --omit=dev`, then `npm run import:legacy` against the test stack's
 * DynamoDB. Nothing of this checkout's node_modules is on the PATH or the
 * module path: the install must bring the pinned Node, tsx and everything
 * the CLI imports by itself. The npm cache makes it quick here; on an empty
 * cache it downloads ~60 packages (measured in docs/testing.md).
 */
jest.setTimeout(600_000); // npm ci on a loaded 2-core machine, an empty cache at worst

const ROOT = path.resolve(__dirname, '../..');
const aws = stackClients();
afterAll(() => aws.dynamodb.destroy());

/** This checkout's files as git sees them (tracked, and new ones not ignored), copied to `dir`. */
function copyRepository(dir: string): number {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT })
    .toString()
    .split('\0')
    .filter(Boolean);
  let copied = 0;
  for (const file of files) {
    const from = path.join(ROOT, file);
    if (!fs.existsSync(from)) continue; // deleted in the work tree, not yet in git
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.copyFileSync(from, path.join(dir, file));
    copied++;
  }
  return copied;
}

/** The caller's environment without this checkout's tools and without what `npm run` added for the test run. */
function operatorEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (
      !/^(npm_(lifecycle|package)_.*|npm_config_local_prefix|npm_execpath|npm_node_execpath|NODE|INIT_CWD)$/.test(key)
    )
      env[key] = value;
  env.PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((entry) => !path.resolve(entry).startsWith(ROOT + path.sep))
    .join(path.delimiter);
  return { ...env, ...extra };
}

function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

it('npm ci --omit=dev, then npm run import:legacy: imports a legacy file and passes the check', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'legacy-install-'));
  const { name: table, drop } = await isolatedTable(aws, 'DownloadsTable');
  const shared = randomBytes(20).toString('hex');
  const t = (s: number) => sqliteTime(Date.UTC(2022, 2, 1, 9, 0, s));
  const legacy = legacyFile([
    { infohash: randomBytes(20).toString('hex'), state: 'completed', name: 'Première', created_at: t(0) },
    { infohash: shared, state: 'downloading', name: 'twice', created_at: t(1) },
    { infohash: shared, state: 'queued', name: 'twice again', created_at: t(2), idempotency_key: null },
    { infohash: 'zz', state: 'completed' },
  ]);
  try {
    expect(copyRepository(dir)).toBeGreaterThan(100);
    const env = operatorEnv({});
    const install = await run('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], dir, env);
    process.stdout.write(`npm ci --omit=dev: ${install.ms} ms\n`);
    if (install.code !== 0) throw new Error(`npm ci failed (${install.code}):\n${install.stderr}`);
    // A production install: no test or build tooling, the pinned Node and tsx there.
    for (const dev of ['jest', 'typescript', 'esbuild-register', 'serverless-offline', '@types/node'])
      expect(fs.existsSync(path.join(dir, 'node_modules', dev))).toBe(false);
    for (const bin of ['node', 'tsx']) expect(fs.existsSync(path.join(dir, 'node_modules/.bin', bin))).toBe(true);

    const report = path.join(dir, 'map.json');
    const imported = await run(
      'npm',
      ['run', '--silent', 'import:legacy', '--', '--sqlite', legacy.file, '--report', report],
      dir,
      operatorEnv({ TABLE_DOWNLOADS: table }),
    );
    process.stdout.write(`npm run import:legacy (4 rows): ${imported.ms} ms\n`);
    if (imported.code !== 0)
      throw new Error(`import failed (${imported.code}):\n${imported.stdout}\n${imported.stderr}`);
    expect(imported.stdout).toMatch(/: 4 rows\n {2}imported {7}3 {3}\(1 of them as failed: conflict\)\n/);
    expect(imported.stdout).toMatch(/bad row: legacy id 4: invalid infohash "zz"/);
    expect(imported.stdout).toMatch(/\nconsistency check: OK\n/);
    expect(imported.stderr).not.toMatch(/ExperimentalWarning|\bError\b/);

    const map = JSON.parse(fs.readFileSync(report, 'utf8'));
    expect(map).toMatchObject({ table, summary: { imported: 3, conflicts: 1 }, check: { ok: true, found: 3 } });
    const items = await tableItems(aws, table);
    expect(items.download.map((d) => [d.id, d.state]).sort()).toEqual(
      [
        [map.ids['1'], 'completed'],
        [map.ids['2'], 'downloading'],
        [map.ids['3'], 'failed'],
      ].sort(),
    );
  } finally {
    legacy.remove();
    await drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
