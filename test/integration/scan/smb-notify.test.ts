import { GetObjectCommand } from '@aws-sdk/client-s3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { handleRequest, pollRun } from '../../../lib/scan/gateway';
import { SmbHotFolder } from '../../../lib/scan/smb-hotfolder';
import { Smbd, startSmbd } from '../../../tools/stack/samba';
import { aws, bucket, FIXTURES, finals, harness, Harness, request, scanSuite, upload } from '../../support/scan';

/**
 * The share's change notification as the poll loop's wake-up (lib/scan/smb-notify.ts), on real Samba servers:
 * one that notifies, one with `change notify = no`. The gateway runs its own poll loop on the real clock; the
 * test plays the scanning system, writing the answer set into the shared folder file by file.
 */
scanSuite();

const SETTLE_MS = 2000;
let dir: string;
let notifying: Smbd & { root: string };
let silent: Smbd & { root: string };

async function server(name: string, globals = ''): Promise<Smbd & { root: string }> {
  const root = path.join(dir, name, 'share');
  fs.mkdirSync(root, { recursive: true });
  const smbd = await startSmbd({
    dir: path.join(dir, name),
    globals,
    shares: `[hotfolder]\n  path = ${root}\n  read only = no\n  valid users = root\n`,
  });
  return { ...smbd, root };
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smb-notify-'));
  fs.chmodSync(dir, 0o755);
  [notifying, silent] = await Promise.all([server('notify'), server('silent', '  change notify = no\n')]);
}, 60_000);
afterAll(async () => {
  await Promise.all([notifying.service.stop(), silent.service.stop()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

const figures: string[] = [];
afterAll(() => figures.length && console.log(`[smb-notify]\n  ${figures.join('\n  ')}`));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function gateway(smbd: Smbd & { root: string }, pollSeconds: number) {
  const folder = new SmbHotFolder({
    host: '127.0.0.1',
    port: smbd.port,
    share: 'hotfolder',
    user: smbd.user,
    password: smbd.password,
    timeoutMs: 5000,
    notifyRetryMs: 300,
  });
  const h = await harness(
    { hotFolder: folder, now: Date.now },
    { SCAN_POLL_SECONDS: String(pollSeconds), SCAN_SETTLE_SECONDS: String(SETTLE_MS / 1000) },
    smbd.root,
  );
  // The Output/ folder the scanning system keeps (the watcher opens it; its absence is retried like a refusal).
  fs.mkdirSync(path.join(smbd.root, 'Output'), { recursive: true });
  return { folder, h };
}

/** Submits one job and runs the poll loop until it is idle; resolves with the loop's end. */
async function submit(h: Harness, budgetMs = 60_000): Promise<{ jobId: string; loop: Promise<unknown> }> {
  const req = request(await upload('aep_6.pdf'), 'aep_6.pdf', { reply_deadline: '2099-01-01T00:00:00Z' });
  expect(await handleRequest(h.deps, JSON.stringify(req))).toBe('started');
  return { jobId: req.job_id, loop: pollRun(h.deps, Date.now() + budgetMs) };
}

const answer = (jobId: string) =>
  JSON.stringify({ ...JSON.parse(fs.readFileSync(path.join(FIXTURES, 'aep_6.json'), 'utf8')), file_uid: jobId });

/** Writes the job's answer set into the share's folder one file at a time, `gapMs` apart; the last write's time. */
async function writeSet(root: string, jobId: string, files: number, gapMs: number): Promise<number> {
  const folder = path.join(root, 'Output', jobId);
  fs.mkdirSync(folder);
  for (let i = 0; i < files; i++) {
    if (i) await sleep(gapMs);
    fs.writeFileSync(path.join(folder, `part-${i}.json`), answer(jobId));
  }
  return Date.now();
}

/** When the job's final envelope arrived (polled: the NATS subscription records it). */
async function finalAt(h: Harness, timeoutMs: number): Promise<number> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(50)) if (finals(h).length) return Date.now();
  throw new Error('no final envelope');
}

async function rawFiles(h: Harness): Promise<number> {
  const key = finals(h)[0].raw_s3_key!;
  const body = await aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (JSON.parse(await body.Body!.transformToString()) as { files: unknown[] }).files.length;
}

async function until(check: () => boolean, timeoutMs: number, why = () => ''): Promise<void> {
  for (const end = Date.now() + timeoutMs; !check(); await sleep(50))
    if (Date.now() > end) throw new Error(`condition not met in time ${why()}`);
}

describe('SMB change notification', () => {
  it('an answer set written file by file is accepted once, after the settle window, whole, woken by the share', async () => {
    // A 15 s poll: an answer seen within seconds was seen because the share said so, not because of the timer.
    const { folder, h } = await gateway(notifying, 15);
    const { jobId, loop } = await submit(h, 25_000);
    await until(
      () => folder.wakeMode() === 'notify',
      10_000,
      () =>
        `watcher ended: ${folder.watch.lastEnd}, started ${folder.watch.started}, passes ${JSON.stringify(h.logs.slice(-3))}`,
    );
    const last = await writeSet(notifying.root, jobId, 3, 700);
    const at = await finalAt(h, 18_000);
    figures.push(`notify: last file → final envelope ${at - last} ms (settle ${SETTLE_MS} ms, poll 15 s)`);
    expect(at - last).toBeGreaterThanOrEqual(SETTLE_MS - 100); // never before the set stopped changing
    expect(at - last).toBeLessThan(SETTLE_MS + 6000); // a poll would have seen the set up to 15 s late
    await sleep(500);
    expect(finals(h)).toHaveLength(1);
    expect(finals(h)[0].status).toBe('done');
    expect(await rawFiles(h)).toBe(3); // never the first file alone
    folder.close();
    await loop;
  }, 60_000);

  it('smbd killed mid-wait, then started again: the loop falls back to its poll, then notification is armed again', async () => {
    const { folder, h } = await gateway(notifying, 2);
    const { jobId, loop } = await submit(h);
    await until(() => folder.wakeMode() === 'notify', 10_000);
    const started = folder.watch.started;
    await notifying.service.stop(); // SIGTERM to the group, SIGKILL if it lingers: the session dies
    await until(() => folder.wakeMode() === 'poll', 10_000);
    expect(folder.watch.lastEnd).toMatch(/ECONN|EPIPE|ETIMEDOUT|closed|\d/);
    const last = await writeSet(notifying.root, jobId, 2, 300);
    notifying.service = await notifying.relaunch();
    const at = await finalAt(h, 30_000);
    expect(at - last).toBeGreaterThanOrEqual(SETTLE_MS - 100);
    expect(await rawFiles(h)).toBe(2);
    await until(() => folder.wakeMode() === 'notify', 15_000);
    expect(folder.watch.started).toBeGreaterThan(started);
    folder.close();
    await loop;
  }, 90_000);

  it('smbd stopped (SIGSTOP) and resumed mid-wait: the answer still arrives once and notification stays armed', async () => {
    const { folder, h } = await gateway(notifying, 2);
    const { jobId, loop } = await submit(h);
    await until(() => folder.wakeMode() === 'notify', 15_000);
    process.kill(-notifying.service.pid, 'SIGSTOP');
    const last = await writeSet(notifying.root, jobId, 2, 300);
    await sleep(3000);
    process.kill(-notifying.service.pid, 'SIGCONT');
    const at = await finalAt(h, 40_000);
    expect(at - last).toBeGreaterThanOrEqual(SETTLE_MS - 100);
    await sleep(500);
    expect(finals(h)).toHaveLength(1);
    expect(await rawFiles(h)).toBe(2);
    await until(() => folder.wakeMode() === 'notify', 20_000);
    folder.close();
    await loop;
  }, 90_000);

  it('a server with `change notify = no`: the watcher is refused, the loop polls, and answers within settle + poll', async () => {
    const pollSeconds = 2;
    const { folder, h } = await gateway(silent, pollSeconds);
    const { jobId, loop } = await submit(h);
    await until(() => folder.watch.lastEnd !== undefined, 10_000);
    expect(folder.watch.lastEnd).toBe('ENOSYS');
    expect(folder.wakeMode()).toBe('poll');
    const last = await writeSet(silent.root, jobId, 2, 300);
    const at = await finalAt(h, 30_000);
    figures.push(
      `change notify = no: last file → final envelope ${at - last} ms (settle ${SETTLE_MS} ms, poll ${pollSeconds} s)`,
    );
    expect(at - last).toBeGreaterThanOrEqual(SETTLE_MS - 100);
    // settle + poll, plus the passes' own SMB calls on a loaded machine
    expect(at - last).toBeLessThan(SETTLE_MS + pollSeconds * 1000 + 8000);
    expect(await rawFiles(h)).toBe(2);
    expect(folder.wakeMode()).toBe('poll');
    folder.close();
    await loop;
  }, 60_000);
});
