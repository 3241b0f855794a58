import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scanOnce } from '../../../emulator/scanner/scanner';
import { hotFolderName, LocalHotFolder } from '../../../lib/scan/hotfolder';

/** The scanner emulator on the real filesystem (no stack needed). */
const FIXTURES = path.resolve(__dirname, '../../../fixtures/ocr');
const ROOT = path.resolve(__dirname, '../../..');
let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'scanner-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const answer = (dir: string, job: string) =>
  fs
    .readdirSync(path.join(root, dir, job))
    .map((f) => [f, JSON.parse(fs.readFileSync(path.join(root, dir, job, f), 'utf8'))]);

it('works through LocalHotFolder and honours the folder-name settings', async () => {
  const dirs = { input: 'In box', output: 'Out-box', tmp: 'scratch' };
  const folder = new LocalHotFolder(root, dirs);
  const job = randomUUID();
  await folder.put(hotFolderName(job, 'aep_6.pdf'), Buffer.from('%PDF'));
  expect(await scanOnce({ root, dirs, fixturesDir: FIXTURES })).toEqual([job]);
  expect((await folder.poll(job))!.map((f) => f.name)).toEqual(['aep_6.json']);
  expect(fs.readdirSync(path.join(root, 'In box'))).toEqual([`${job}_aep_6.pdf.done`]);
});

it('pays its delay once per pass, not per file', async () => {
  const folder = new LocalHotFolder(root);
  for (let i = 0; i < 3; i++) await folder.put(hotFolderName(randomUUID(), 'aep_6.pdf'), Buffer.from('x'));
  const began = Date.now();
  expect(await scanOnce({ root, fixturesDir: FIXTURES, delayMs: 400 })).toHaveLength(3);
  const took = Date.now() - began;
  expect(took).toBeGreaterThanOrEqual(400);
  expect(took).toBeLessThan(1200); // per file it would be 1200 at least
});

it('a missing Input/ is an empty pass, not an error', async () => {
  await expect(scanOnce({ root, fixturesDir: FIXTURES })).resolves.toEqual([]);
});

it('a missing fixtures folder is ONE warning, and every input still gets an INVALID_DOCUMENT answer', async () => {
  const folder = new LocalHotFolder(root);
  const warnings: string[] = [];
  const options = {
    root,
    fixturesDir: path.join(root, 'no-fixtures'),
    warn: (event: string) => void warnings.push(event),
  };
  const jobs = [randomUUID(), randomUUID()];
  await folder.put(hotFolderName(jobs[0], 'aep_6.pdf'), Buffer.from('x'));
  await scanOnce(options);
  await folder.put(hotFolderName(jobs[1], 'aep_3.pdf'), Buffer.from('x'));
  await scanOnce(options);
  expect(warnings).toEqual(['scanner_fixtures_missing']);
  for (const job of jobs)
    expect(answer('Output', job)[0][1]).toMatchObject({
      file_uid: job,
      error: { code: 'INVALID_DOCUMENT' },
      data_ocr: [],
    });
});

it('"no pair": data_ocr is [] and the message names the file without its uuid prefix', async () => {
  const job = randomUUID();
  await new LocalHotFolder(root).put(hotFolderName(job, 'unknown.pdf'), Buffer.from('x'));
  await scanOnce({ root, fixturesDir: FIXTURES });
  expect(answer('Output', job)).toEqual([
    [
      'unknown.json',
      {
        file_uid: job,
        error: { code: 'INVALID_DOCUMENT', message: 'unknown.pdf: нет эталонного ответа в фикстурах' },
        data_ocr: [],
      },
    ],
  ]);
});

it('never wedges on an existing Output/<uuid>/: the input is marked done, the others still answered, the next pass is clean', async () => {
  const folder = new LocalHotFolder(root);
  const [taken, fresh] = [randomUUID(), randomUUID()].sort();
  fs.mkdirSync(path.join(root, 'Output', taken), { recursive: true });
  fs.writeFileSync(path.join(root, 'Output', taken, 'earlier.json'), '{}');
  await folder.put(hotFolderName(taken.toUpperCase(), 'aep_6.pdf'), Buffer.from('x')); // another spelling of a job already answered
  await folder.put(hotFolderName(fresh, 'aep_6.pdf'), Buffer.from('x'));
  const warnings: string[] = [];
  const done = await scanOnce({ root, fixturesDir: FIXTURES, warn: (e) => void warnings.push(e) });
  expect(done.sort()).toEqual([taken, fresh].sort());
  expect(warnings).toEqual(['scanner_output_exists']);
  expect(fs.readdirSync(path.join(root, 'Output', taken))).toEqual(['earlier.json']); // never overwritten
  expect(fs.readdirSync(path.join(root, 'Input')).every((n) => n.endsWith('.done'))).toBe(true);
  await expect(scanOnce({ root, fixturesDir: FIXTURES })).resolves.toEqual([]);
});

it('deletes .done inputs older than the retention, keeps newer ones', async () => {
  const input = path.join(root, 'Input');
  fs.mkdirSync(input);
  fs.writeFileSync(path.join(input, 'old.pdf.done'), 'x');
  fs.writeFileSync(path.join(input, 'new.pdf.done'), 'x');
  const hourAgo = new Date(Date.now() - 3600_000);
  fs.utimesSync(path.join(input, 'old.pdf.done'), hourAgo, hourAgo);
  await scanOnce({ root, fixturesDir: FIXTURES, doneRetentionMs: 600_000 });
  expect(fs.readdirSync(input)).toEqual(['new.pdf.done']);
});

it('a missing root at start exits with code 2 and a clear message', async () => {
  const missing = path.join(root, 'nowhere');
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [require.resolve('tsx/cli'), path.join(ROOT, 'emulator/scanner/main.ts')],
      { env: { ...process.env, SCAN_HOTFOLDER_ROOT: missing } },
      (err, _out, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
    );
  });
  expect(code).toBe(2);
  expect(stderr).toContain(`the hot folder root ${missing} does not exist`);
}, 30_000);

it('writes the whole answer set aside and renames it into Output/ at once: the set never appears part-written', async () => {
  const folder = new LocalHotFolder(root);
  const job = randomUUID();
  await folder.put(hotFolderName(job, 'aep_3.pdf'), Buffer.from('%PDF'));
  const target = path.join(root, 'Output', job);
  // At every answer file written, Output/<job>/ does not exist yet (the poller could not see a partial set).
  const seen: boolean[] = [];
  const write = jest.spyOn(fs.promises, 'writeFile').mockImplementation(async (file, data) => {
    seen.push(fs.existsSync(target));
    fs.writeFileSync(file as string, data as string);
  });
  try {
    expect(await scanOnce({ root, fixturesDir: FIXTURES })).toEqual([job]);
  } finally {
    write.mockRestore();
  }
  expect(seen).toEqual([false, false]);
  expect(fs.readdirSync(target).sort()).toEqual(['aep_3.json', 'aep_3_ofr.json']);
  expect(fs.readdirSync(path.join(root, 'Output'))).toEqual([job]); // no staging folder left
});

const runMain = (env: Record<string, string>, until: RegExp) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [require.resolve('tsx/cli'), path.join(ROOT, 'emulator/scanner/main.ts')],
      { env: { ...process.env, SCAN_HOTFOLDER_ROOT: '', SCAN_HOTFOLDER_PATH: '', ...env } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      if (until.test(chunk.toString())) child.kill('SIGTERM');
    });
  });

it("takes the design's SCAN_HOTFOLDER_PATH (SCAN_HOTFOLDER_ROOT its alias); the two differing is refused", async () => {
  const started = await runMain({ SCAN_HOTFOLDER_PATH: root, SCAN_EMULATOR_POLL_SECONDS: '0.05' }, /watching/);
  expect(started.stdout).toContain(`scanner emulator watching ${root}`);
  const both = await runMain({ SCAN_HOTFOLDER_PATH: root, SCAN_HOTFOLDER_ROOT: root }, /watching/);
  expect(both.stdout).toContain('watching');
  const differ = await runMain({ SCAN_HOTFOLDER_PATH: root, SCAN_HOTFOLDER_ROOT: '/elsewhere' }, /watching/);
  expect(differ.code).toBe(2);
  expect(differ.stderr).toContain('SCAN_HOTFOLDER_ROOT');
  const share = await runMain({ SCAN_HOTFOLDER_PATH: '//host/share' }, /watching/);
  expect(share.code).toBe(2);
}, 60_000);
