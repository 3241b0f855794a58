import { GetObjectCommand } from '@aws-sdk/client-s3';
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scanOnce } from '../../../emulator/scanner/scanner';
import { handleRequest, pollOnce } from '../../../lib/scan/gateway';
import { MAX_INBOX_NAME_BYTES } from '../../../lib/names';
import { loadScanConfig } from '../../../lib/scan/config';
import { hotFolderFrom } from '../../../lib/scan/hotfolders';
import { SmbHotFolder } from '../../../lib/scan/smb-hotfolder';
import { Share, startSamba } from '../../support/samba';
import { aws, bucket, FIXTURES, finals, harness, request, scanSuite, settleNats, upload } from '../../support/scan';

/**
 * The gateway's SMB rules on a real Samba share (on 445: the Python client
 * bindings that play the busy scanning system reach no other port).
 */
scanSuite();
let share: Share;
let sambaDir: string;
beforeAll(async () => {
  sambaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'samba-rules-'));
  share = await startSamba(sambaDir, 445);
}, 60_000);
afterAll(async () => {
  await share.service.stop();
  fs.rmSync(sambaDir, { recursive: true, force: true });
});

const smbHarness = (env: Record<string, string> = {}, shareName = share.share) =>
  harness({ hotFolder: new SmbHotFolder({ ...share, share: shareName, timeoutMs: 10_000 }) }, env, share.root);
const inputs = () => fs.readdirSync(path.join(share.root, 'Input'));

/** Opens a file of the share the way a busy scanning system would, until released. */
async function hold(
  remote: string,
  mode: 'exclusive' | 'delete-pending' | 'writing',
  localFile?: string,
): Promise<{ release: () => Promise<void> }> {
  const child: ChildProcess = spawn(
    '/usr/bin/python3',
    [
      path.join(__dirname, '../../support/smb-hold.py'),
      share.host,
      String(share.port),
      share.share,
      share.user,
      share.password,
      remote,
      mode,
      path.join(sambaDir, 'smb.conf'),
      ...(localFile ? [localFile] : []),
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => String(d).includes('held') && resolve());
    child.on('exit', (code) => reject(new Error(`smb-hold exited ${code}`)));
  });
  return {
    release: async () => {
      const exited = new Promise((r) => child.on('exit', r));
      child.stdin!.end();
      await exited;
    },
  };
}

describe('SMB: long names', () => {
  it('150 Cyrillic characters reach Input/ on the share', async () => {
    const h = await smbHarness();
    const req = request(await upload('aep_6.pdf'), `${'Я'.repeat(150)}.pdf`);
    expect(await handleRequest(h.deps, JSON.stringify(req))).toBe('started');
    expect(inputs()).toHaveLength(1);
    expect(Buffer.byteLength(inputs()[0], 'utf8')).toBeLessThanOrEqual(MAX_INBOX_NAME_BYTES);
    await settleNats();
    expect(finals(h)).toEqual([]);
  });
});

describe('SMB: folders', () => {
  it('put creates a missing Input/ and Tmp/ on the share; healthy() is the share answering', async () => {
    const h = await smbHarness();
    fs.rmSync(path.join(share.root, 'Input'), { recursive: true });
    expect(await h.deps.hotFolder.healthy()).toBe(true);
    expect(await handleRequest(h.deps, JSON.stringify(request(await upload('aep_6.pdf'), 'aep_6.pdf')))).toBe(
      'started',
    );
    expect(inputs()).toHaveLength(1);
    expect(fs.existsSync(path.join(share.root, 'Tmp'))).toBe(true);
  });
});

describe('SMB: an answer still held by the scanning system is "not ready yet", not an error', () => {
  it.each(['exclusive', 'delete-pending'] as const)(
    '%s: the job waits, then finishes once the file is released',
    async (mode) => {
      const h = await smbHarness();
      const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
      await handleRequest(h.deps, JSON.stringify(req));
      await scanOnce({ root: share.root, fixturesDir: FIXTURES });
      const answer = fs.readdirSync(path.join(share.root, 'Output', req.job_id))[0];
      const held = await hold(`Output\\${req.job_id}\\${answer}`, mode);
      try {
        for (let i = 0; i < 3; i++, h.clock.now += 2500) await pollOnce(h.deps);
        await settleNats();
        expect(finals(h)).toEqual([]);
        expect((await h.deps.jobs.get(req.job_id))!.state).toBe('submitted');
      } finally {
        await held.release();
      }
      if (mode === 'delete-pending')
        fs.writeFileSync(
          path.join(share.root, 'Output', req.job_id, answer),
          fs.readFileSync(path.join(FIXTURES, 'aep_6.json')),
        ); // the scanner writes it again
      for (let i = 0; i < 3; i++, h.clock.now += 2500) await pollOnce(h.deps);
      await settleNats();
      expect(finals(h)).toEqual([expect.objectContaining({ job_id: req.job_id, status: 'done' })]);
    },
  );
});

/** The raw answer the job saved, parsed (the names and contents of every file read). */
async function rawAnswer(
  jobId: string,
): Promise<{ files: Array<{ name: string; response: unknown; parse_error: unknown }> }> {
  const raw = await aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key: `raw/${jobId}.json` }));
  return JSON.parse(await raw.Body!.transformToString());
}

describe('SMB: an answer still being written is read under an exclusive open', () => {
  it('a writer holding the file past the settle window: no envelope; once it finishes, exactly one, whole', async () => {
    const h = await smbHarness();
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    await handleRequest(h.deps, JSON.stringify(req));
    fs.mkdirSync(path.join(share.root, 'Output', req.job_id), { recursive: true });
    const fixture = path.join(FIXTURES, 'aep_6.json');
    // Half the answer written, the file still open for writing (sharing reads, as most writers do): a reader that
    // opens deny-none gets the half and a parse error; a deny-write open is refused until the writer closes.
    const writer = await hold(`Output\\${req.job_id}\\answer.json`, 'writing', fixture);
    try {
      const size = fs.statSync(path.join(share.root, 'Output', req.job_id, 'answer.json')).size;
      expect(size).toBe(Math.floor(fs.statSync(fixture).size / 2));
      // Unchanged for longer than the 2 s window: settled by (name, size), yet refused at the read.
      for (let i = 0; i < 4; i++, h.clock.now += 2500) await pollOnce(h.deps);
      await settleNats();
      expect(finals(h)).toEqual([]);
      expect((await h.deps.jobs.get(req.job_id))!.state).toBe('submitted');
    } finally {
      await writer.release();
    }
    for (let i = 0; i < 4; i++, h.clock.now += 2500) await pollOnce(h.deps);
    await settleNats();
    expect(finals(h)).toEqual([expect.objectContaining({ job_id: req.job_id, status: 'done' })]);
    expect((await rawAnswer(req.job_id)).files).toEqual([
      { name: 'answer.json', response: JSON.parse(fs.readFileSync(fixture, 'utf8')), parse_error: null },
    ]);
  }, 60_000);
});

describe('SMB: every *.json is read, whatever its name; a name no open can address is refused, never skipped', () => {
  it('names with `;`, `&`, `$`, a quote and a leading space are read like any other', async () => {
    const h = await smbHarness();
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    await handleRequest(h.deps, JSON.stringify(req));
    const out = path.join(share.root, 'Output', req.job_id);
    fs.mkdirSync(out, { recursive: true });
    const names = ['a;b.json', " lead ' & $x.json", 'Отчёт; 100%.json'];
    const body = fs.readFileSync(path.join(FIXTURES, 'aep_6.json'));
    for (const name of names) fs.writeFileSync(path.join(out, name), body);
    for (let i = 0; i < 3; i++, h.clock.now += 2500) await pollOnce(h.deps);
    await settleNats();
    expect(finals(h)).toEqual([expect.objectContaining({ job_id: req.job_id, status: 'done' })]);
    const raw = await rawAnswer(req.job_id);
    expect(raw.files.map((f) => [f.name, f.parse_error])).toEqual([...names].sort().map((n) => [n, null]));
  }, 60_000);

  it('a request named with `;` reaches Input/ intact; a traversal or a backslash is refused "недопустимое имя файла", nothing written', async () => {
    const h = await smbHarness();
    const fine = request(await upload('aep_6.pdf'), "a;b & 'c'.pdf");
    expect(await handleRequest(h.deps, JSON.stringify(fine))).toBe('started');
    expect(inputs()).toEqual([`${fine.job_id}_a;b & 'c'.pdf`]);
    for (const name of ['../x.pdf', '..\\Output\\x.pdf', 'a\\b.pdf'])
      await handleRequest(h.deps, JSON.stringify(request(await upload('aep_6.pdf'), name)));
    await settleNats();
    expect(finals(h).map((e) => e.error)).toEqual(
      Array(3).fill({ code: 'RECOGNITION_FAILED', message: 'недопустимое имя файла' }),
    );
    expect(inputs()).toEqual([`${fine.job_id}_a;b & 'c'.pdf`]);
    expect(fs.readdirSync(path.join(share.root, 'Tmp'))).toEqual([]);
  }, 60_000);

  it('a `"` in a name the share shows raw (no open can name it): the job ends "недопустимое имя файла"', async () => {
    const h = await smbHarness({}, share.rawNames.share);
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    await handleRequest(h.deps, JSON.stringify(req));
    const out = path.join(share.root, 'Output', req.job_id);
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'q"x.json'), fs.readFileSync(path.join(FIXTURES, 'aep_6.json')));
    expect((await h.deps.hotFolder.poll(req.job_id))!.map((f) => f.name)).toEqual(['q"x.json']);
    for (let i = 0; i < 3; i++, h.clock.now += 2500) await pollOnce(h.deps);
    await settleNats();
    expect(finals(h)).toEqual([
      expect.objectContaining({
        job_id: req.job_id,
        status: 'error',
        error: { code: 'RECOGNITION_FAILED', message: 'недопустимое имя файла' },
      }),
    ]);
  }, 60_000);
});

/** Opens a folder tree to every account (the guest share's files are read as `nobody`). */
function shareReadable(dir: string) {
  fs.chmodSync(dir, 0o777);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) shareReadable(at);
    else fs.chmodSync(at, 0o666);
  }
}

describe('SMB rule 30: where the hot folder is, and who may log in', () => {
  /** A harness whose hot folder comes from the settings, as the deployed gateway builds it. */
  async function configured(env: Record<string, string>, localRoot: string) {
    const scan = loadScanConfig({ ...env, SCAN_SMB_PORT: String(share.port) });
    const folder = hotFolderFrom(scan.hotFolder, scan.dirs) as SmbHotFolder;
    const h = await harness({ hotFolder: folder }, {}, share.root);
    fs.mkdirSync(path.join(localRoot, 'Input'), { recursive: true });
    return { h, folder };
  }
  const login = () => ({ SCAN_SMB_USER: share.user, SCAN_SMB_PASSWORD: share.password });

  async function scanThrough(h: Awaited<ReturnType<typeof configured>>['h'], localRoot: string) {
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    expect(await handleRequest(h.deps, JSON.stringify(req))).toBe('started');
    expect(fs.readdirSync(path.join(localRoot, 'Input'))).toEqual([`${req.job_id}_aep_6.pdf`]);
    await scanOnce({ root: localRoot, fixturesDir: FIXTURES });
    // The emulator writes as root with private modes; a scanning system writes what the share's users can read.
    shareReadable(path.join(localRoot, 'Output'));
    for (let i = 0; i < 3; i++, h.clock.now += 2500) await pollOnce(h.deps);
    await settleNats();
    expect(finals(h)).toEqual([expect.objectContaining({ job_id: req.job_id, status: 'done' })]);
  }

  it('a folder inside the share (//host/share/dir/sub) is the root: Input/, Tmp/ and Output/ live there', async () => {
    const local = path.join(share.root, 'dept', 'in');
    const { h, folder } = await configured(
      { SCAN_SMB_SHARE: `//${share.host}/${share.share}/dept/in`, ...login() },
      local,
    );
    try {
      expect(await folder.healthy()).toBe(true);
      await scanThrough(h, local);
      expect(fs.existsSync(path.join(local, 'Tmp'))).toBe(true);
      // Nothing written at the share's root (its Input/ is the harness's own, empty).
      expect(fs.readdirSync(share.root).sort()).toEqual(['Input', 'dept']);
      expect(fs.readdirSync(path.join(share.root, 'Input'))).toEqual([]);
      // The folder gone: unavailable, never "no answer yet".
      fs.rmSync(path.join(share.root, 'dept'), { recursive: true });
      expect(await folder.healthy()).toBe(false);
      await expect(folder.poll('3f2504e0-4f89-41d3-9a0c-0305e82c3301')).rejects.toThrow(/missing/);
    } finally {
      folder.close();
    }
  });

  it('the UNC form (\\\\host\\share\\dir) names the same place', async () => {
    const local = path.join(share.root, 'unc');
    const { h, folder } = await configured(
      { SCAN_SMB_SHARE: `\\\\${share.host}\\${share.share}\\unc`, ...login() },
      local,
    );
    try {
      await scanThrough(h, local);
    } finally {
      folder.close();
    }
  });

  it('a guest share: no user, no password (smbclient -N)', async () => {
    const local = share.guest.root;
    for (const entry of fs.readdirSync(local)) fs.rmSync(path.join(local, entry), { recursive: true, force: true });
    const { h, folder } = await configured({ SCAN_SMB_SHARE: `//${share.host}/${share.guest.share}` }, local);
    try {
      fs.chmodSync(path.join(local, 'Input'), 0o777);
      await scanThrough(h, local);
      expect(fs.statSync(path.join(local, 'Tmp')).uid).not.toBe(0); // written as the guest account, not as root
    } finally {
      folder.close();
    }
  });
});

describe('SMB rule 30: a share with restricted rights (no folder may be created at its root)', () => {
  let wrapperDir: string;
  beforeAll(() => {
    // Windows answers ACCESS_DENIED (not OBJECT_NAME_COLLISION) to a mkdir of an existing folder where the user may
    // not create folders; Samba always answers the collision. This smbclient wrapper answers as Windows does.
    wrapperDir = fs.mkdtempSync(path.join(os.tmpdir(), 'smbclient-windows-'));
    fs.writeFileSync(
      path.join(wrapperDir, 'smbclient'),
      '#!/bin/sh\nsmbclient "$@" 2>&1 | sed -u "s/NT_STATUS_OBJECT_NAME_COLLISION making remote directory/NT_STATUS_ACCESS_DENIED making remote directory/"\n',
      { mode: 0o755 },
    );
  });
  afterAll(() => fs.rmSync(wrapperDir, { recursive: true, force: true }));

  const restricted = (smbclient?: string) =>
    new SmbHotFolder({ ...share, share: share.restricted.share, timeoutMs: 10_000, smbclient });
  const inbox = () => fs.readdirSync(path.join(share.restricted.root, 'Input'));

  it.each([
    ['Samba (OBJECT_NAME_COLLISION)', undefined],
    ['a Windows-like server (ACCESS_DENIED)', 'windows'],
  ])('%s on mkdir of the existing Input/ and Tmp/: the file is delivered', async (_what, kind) => {
    const folder = restricted(kind ? path.join(wrapperDir, 'smbclient') : undefined);
    try {
      const before = inbox().length;
      const h = await harness({ hotFolder: folder }, {});
      const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
      expect(await handleRequest(h.deps, JSON.stringify(req))).toBe('started');
      await settleNats();
      expect(finals(h)).toEqual([]); // no RECOGNITION_FAILED
      expect(inbox()).toHaveLength(before + 1);
      expect(inbox()).toContain(`${req.job_id}_aep_6.pdf`);
    } finally {
      folder.close();
    }
  });

  it('a folder that is missing and may not be created is still "hot folder unavailable"', async () => {
    const tmp = path.join(share.restricted.root, 'Tmp');
    fs.rmSync(tmp, { recursive: true });
    const folder = restricted(path.join(wrapperDir, 'smbclient'));
    try {
      const h = await harness({ hotFolder: folder }, {});
      await handleRequest(h.deps, JSON.stringify(request(await upload('aep_6.pdf'), 'aep_6.pdf')));
      await settleNats();
      expect(finals(h)).toEqual([
        expect.objectContaining({ error: { code: 'RECOGNITION_FAILED', message: 'горячая папка недоступна' } }),
      ]);
      expect(fs.existsSync(tmp)).toBe(false);
    } finally {
      folder.close();
      fs.mkdirSync(tmp);
      fs.chownSync(tmp, 1, 1);
    }
  });
});
