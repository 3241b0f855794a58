import { GetObjectCommand } from '@aws-sdk/client-s3';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { handleRequest, pollOnce } from '../../../lib/scan/gateway';
import { AnswerRefusedError, LocalHotFolder } from '../../../lib/scan/hotfolder';
import { SmbHotFolder } from '../../../lib/scan/smb-hotfolder';
import { Share, startSamba } from '../../support/samba';
import { aws, bucket, finals, harness, Harness, request, scanSuite, settleNats, upload } from '../../support/scan';

/**
 * Links in the hot folder are never followed (docs/security.md, "Hot folder"): a link of any kind in a job's
 * answer set, or in the folders above it, ends the job refused, and nothing of its target reaches the raw
 * answer in S3, the envelope or the logs. Local folder on the real filesystem; the share on a real Samba.
 */
scanSuite();
const SECRET = `SECRET-${randomUUID()}`;
let outside: string;
let share: Share;
let sambaDir: string;
beforeAll(async () => {
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'links-outside-'));
  // What a link would reach: a JSON file (it would parse into the raw answer) and a file that is not (its text
  // would reach `parse_error`), and a folder of answers.
  fs.writeFileSync(path.join(outside, 'env.json'), JSON.stringify({ key: SECRET }));
  fs.writeFileSync(path.join(outside, 'env'), `AUTH_SECRET=${SECRET}\n`);
  fs.mkdirSync(path.join(outside, 'answers'));
  fs.writeFileSync(path.join(outside, 'answers', 'a.json'), JSON.stringify({ key: SECRET }));
  sambaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'samba-links-'));
  share = await startSamba(sambaDir);
}, 60_000);
afterAll(async () => {
  await share.service.stop();
  fs.rmSync(sambaDir, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

async function rawAnswer(jobId: string): Promise<string | undefined> {
  try {
    const raw = await aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key: `raw/${jobId}.json` }));
    return await raw.Body!.transformToString();
  } catch (err) {
    if ((err as Error).name === 'NoSuchKey') return undefined;
    throw err;
  }
}

/** A job submitted, its Output/ folder made by `answer`, polled past the settle window. */
async function answered(h: Harness, answer: (out: string, jobId: string) => void) {
  const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
  await handleRequest(h.deps, JSON.stringify(req));
  answer(path.join(h.root, 'Output'), req.job_id);
  for (let i = 0; i < 4; i++, h.clock.now += 2500) await pollOnce(h.deps);
  await settleNats();
  const everything = JSON.stringify([h.envelopes, h.logs, (await rawAnswer(req.job_id)) ?? null]);
  expect(everything).not.toContain(SECRET);
  return { req, finals: finals(h).filter((e) => e.job_id === req.job_id), raw: await rawAnswer(req.job_id) };
}

const jobDir = (out: string, jobId: string) => {
  fs.mkdirSync(path.join(out, jobId), { recursive: true });
  fs.writeFileSync(path.join(out, jobId, 'answer.json'), JSON.stringify({ error: { code: '' } }));
  return path.join(out, jobId);
};

describe('local hot folder: no link is followed', () => {
  const cases: Array<[string, (out: string, jobId: string) => void, RegExp]> = [
    [
      'a link to a JSON file',
      (o, j) => fs.symlinkSync(path.join(outside, 'env.json'), path.join(jobDir(o, j), 'b.json')),
      /b\.json is a symbolic link/,
    ],
    [
      'a link to a file that is not JSON (its text would be the parse error)',
      (o, j) => fs.symlinkSync(path.join(outside, 'env'), path.join(jobDir(o, j), 'b.json')),
      /b\.json is a symbolic link/,
    ],
    [
      'a link to a folder',
      (o, j) => fs.symlinkSync(path.join(outside, 'answers'), path.join(jobDir(o, j), 'b.json')),
      /b\.json is a symbolic link/,
    ],
    [
      'a dangling link',
      (o, j) => fs.symlinkSync(path.join(outside, 'gone.json'), path.join(jobDir(o, j), 'b.json')),
      /b\.json is a symbolic link/,
    ],
    [
      'a relative link to the answer beside it',
      (o, j) => fs.symlinkSync('answer.json', path.join(jobDir(o, j), 'b.json')),
      /b\.json is a symbolic link/,
    ],
    [
      'a hard link to a file outside',
      (o, j) => fs.linkSync(path.join(outside, 'env.json'), path.join(jobDir(o, j), 'b.json')),
      /b\.json has 2 hard links/,
    ],
    [
      'a FIFO (an open would hang)',
      (o, j) => execFileSync('mkfifo', [path.join(jobDir(o, j), 'b.json')]),
      /b\.json is not a regular file/,
    ],
    [
      "the job's folder is a link",
      (o, j) => {
        fs.mkdirSync(o, { recursive: true });
        fs.symlinkSync(path.join(outside, 'answers'), path.join(o, j));
      },
      /Output\/[0-9a-f-]+ is a symbolic link/,
    ],
    [
      'Output/ is a link',
      (o, j) => {
        fs.symlinkSync(outside, o);
        fs.mkdirSync(path.join(outside, j));
        fs.copyFileSync(path.join(outside, 'env.json'), path.join(outside, j, 'a.json'));
      },
      /Output is a symbolic link/,
    ],
  ];
  it.each(cases)(
    '%s: the job ends refused, nothing of the target in S3, the envelope or the logs',
    async (_what, make, reason) => {
      const h = await harness();
      const { finals: envelopes, raw } = await answered(h, make);
      expect(envelopes).toEqual([
        expect.objectContaining({
          status: 'error',
          error: { code: 'RECOGNITION_FAILED', message: expect.stringMatching(reason) },
        }),
      ]);
      expect(raw).toBeUndefined();
      expect(await h.deps.jobs.slotsInUse()).toBe(0);
    },
  );

  it('an entry that becomes a link after the listing is refused at the open (O_NOFOLLOW)', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'links-race-'));
    const job = randomUUID();
    const dir = jobDir(path.join(root, 'Output'), job);
    const [file] = (await new LocalHotFolder(root).poll(job))!;
    fs.rmSync(path.join(dir, 'answer.json'));
    fs.symlinkSync(path.join(outside, 'env.json'), path.join(dir, 'answer.json'));
    await expect(file.read(1 << 20)).rejects.toThrow(new AnswerRefusedError('answer.json is a symbolic link'));
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("the job's folder swapped for a link after the listing: the open file is not inside it, refused", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'links-race-'));
    const job = randomUUID();
    const dir = jobDir(path.join(root, 'Output'), job);
    const [file] = (await new LocalHotFolder(root).poll(job))!;
    fs.renameSync(dir, `${dir}.away`);
    fs.mkdirSync(path.join(outside, job));
    fs.copyFileSync(path.join(outside, 'env.json'), path.join(outside, job, 'answer.json'));
    fs.symlinkSync(path.join(outside, job), dir);
    await expect(file.read(1 << 20)).rejects.toThrow(/answer\.json is not inside its job's folder/);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a hot folder whose root is reached through a link (configuration, ours) still answers', async () => {
    const real = fs.mkdtempSync(path.join(os.tmpdir(), 'links-root-'));
    const via = `${real}.via`;
    fs.symlinkSync(real, via);
    const job = randomUUID();
    jobDir(path.join(real, 'Output'), job);
    const [file] = (await new LocalHotFolder(via).poll(job))!;
    expect(JSON.parse((await file.read(1 << 20)).toString())).toEqual({ error: { code: '' } });
    fs.rmSync(via);
    fs.rmSync(real, { recursive: true, force: true });
  });
});

describe('SMB share: no link is followed', () => {
  const smbHarness = (shareName: string) =>
    harness({ hotFolder: new SmbHotFolder({ ...share, share: shareName, timeoutMs: 10_000 }) }, {}, share.root);

  it("Samba's defaults (wide links = no): a link whose target leaves the share is never listed or read", async () => {
    const h = await smbHarness(share.share);
    const { finals: envelopes, raw } = await answered(h, (o, j) => {
      const dir = jobDir(o, j);
      fs.symlinkSync(path.join(outside, 'env.json'), path.join(dir, 'b.json'));
      fs.symlinkSync(path.join(outside, 'env'), path.join(dir, 'c.json'));
      fs.symlinkSync(path.join(outside, 'gone.json'), path.join(dir, 'd.json'));
    });
    expect(envelopes).toEqual([expect.objectContaining({ status: 'needs_check' })]); // the one real answer
    expect(JSON.parse(raw!).files.map((f: { name: string }) => f.name)).toEqual(['answer.json']);
  }, 60_000);

  it("Samba's defaults: a job's folder linked out of the share is not there (the job waits, nothing read)", async () => {
    const h = await smbHarness(share.share);
    const { finals: envelopes, req } = await answered(h, (o, j) => {
      fs.mkdirSync(o, { recursive: true });
      fs.symlinkSync(path.join(outside, 'answers'), path.join(o, j));
    });
    expect(envelopes).toEqual([]);
    expect((await h.deps.jobs.get(req.job_id))!.state).toBe('submitted');
  }, 60_000);

  it('Samba follows a link that stays inside the share (follow symlinks = yes): no SMB2 client can tell, so the share must say `follow symlinks = no`', async () => {
    const h = await smbHarness(share.share);
    const { raw } = await answered(h, (o, j) => {
      const dir = jobDir(o, j);
      fs.writeFileSync(path.join(share.root, 'Input', 'other.pdf'), '{"other":"job"}');
      fs.symlinkSync(path.join(share.root, 'Input', 'other.pdf'), path.join(dir, 'b.json'));
    });
    expect(JSON.parse(raw!).files.map((f: { response: unknown }) => f.response)).toEqual([
      { error: { code: '' } },
      { other: 'job' },
    ]);
  }, 60_000);

  it('`follow symlinks = no`: no link of any kind is listed or read, inside the share or out', async () => {
    const h = await smbHarness(share.noLinks.share);
    const { finals: envelopes, raw } = await answered(h, (o, j) => {
      const dir = jobDir(o, j);
      fs.writeFileSync(path.join(share.root, 'Input', 'other.pdf'), JSON.stringify({ key: SECRET }));
      fs.symlinkSync(path.join(share.root, 'Input', 'other.pdf'), path.join(dir, 'b.json'));
      fs.symlinkSync(path.join(outside, 'env.json'), path.join(dir, 'c.json'));
      fs.symlinkSync(path.join(outside, 'answers'), path.join(dir, 'd.json'));
      fs.symlinkSync('answer.json', path.join(dir, 'e.json'));
    });
    expect(envelopes).toEqual([expect.objectContaining({ status: 'needs_check' })]); // the one real answer
    expect(JSON.parse(raw!).files.map((f: { name: string }) => f.name)).toEqual(['answer.json']);
  }, 60_000);

  it("`follow symlinks = no`: a job's folder linked inside the share is not there either", async () => {
    const h = await smbHarness(share.noLinks.share);
    const { finals: envelopes } = await answered(h, (o, j) => {
      fs.mkdirSync(path.join(share.root, 'elsewhere'), { recursive: true });
      fs.writeFileSync(path.join(share.root, 'elsewhere', 'a.json'), JSON.stringify({ key: SECRET }));
      fs.mkdirSync(o, { recursive: true });
      fs.symlinkSync(path.join(share.root, 'elsewhere'), path.join(o, j));
    });
    expect(envelopes).toEqual([]);
  }, 60_000);
});
