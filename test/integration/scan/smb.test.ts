import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scanOnce } from '../../../emulator/scanner/scanner';
import { handleRequest, pollOnce } from '../../../lib/scan/gateway';
import { MAX_INBOX_NAME_BYTES } from '../../../lib/names';
import { SmbHotFolder } from '../../../lib/scan/smb-hotfolder';
import { Share, startSamba } from '../../support/samba';
import { FIXTURES, finals, harness, request, scanSuite, settleNats, upload } from '../../support/scan';

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

const smbHarness = (env: Record<string, string> = {}) =>
  harness({ hotFolder: new SmbHotFolder({ ...share, timeoutMs: 10_000 }) }, env, share.root);
const inputs = () => fs.readdirSync(path.join(share.root, 'Input'));

/** Opens a file of the share the way a busy scanning system would, until released. */
async function hold(remote: string, mode: 'exclusive' | 'delete-pending'): Promise<{ release: () => Promise<void> }> {
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
