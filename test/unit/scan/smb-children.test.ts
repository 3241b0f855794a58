import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InvalidFileNameError } from '../../../lib/names';
import { AnswerRefusedError } from '../../../lib/scan/errors';
import { SmbHotFolder } from '../../../lib/scan/smb-hotfolder';
import { childEnv } from '../../../lib/util/child-env';

/**
 * What the SMB hot folder hands its child programs: smbclient and the Python reader are replaced by scripts
 * that record their environment and what they were asked, answering as the real ones do (a listing, the
 * end-of-batch line, a file's bytes). The real programs run in test/integration/scan/smb.test.ts.
 */
let dir: string;
const PLANTED = 'planted-secret-5b1f';
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smb-children-'));
  const script = (name: string, body: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return file;
  };
  script(
    'smbclient',
    `env > ${dir}/smbclient.env
while IFS= read -r line; do
  printf '%s\\n' "$line" >> ${dir}/commands
  case "$line" in
    lcd*) m=\${line#lcd \\"}; echo "chdir to \${m%\\"} failed" ;;
    ls*) printf '  %-30s %5s %8d  Mon Dec  7 05:38:41 2026\\n' a.json N 8 link.json Ar 12 sparse.json As 9 sub.json D 0 ;;
  esac
done`,
  );
  script('python3', `env > ${dir}/python.env\ncat > ${dir}/python.stdin\nprintf '{"ok":1}'`);
  process.env.PLANTED_SECRET = PLANTED;
  process.env.AUTH_TOKENS = `[{"sha256":"${PLANTED}"}]`;
});
afterAll(() => {
  delete process.env.PLANTED_SECRET;
  delete process.env.AUTH_TOKENS;
  fs.rmSync(dir, { recursive: true, force: true });
});

const folder = () =>
  new SmbHotFolder({
    host: '127.0.0.1',
    share: 'hotfolder',
    user: 'root',
    password: 'the-share-password',
    smbclient: path.join(dir, 'smbclient'),
    python: path.join(dir, 'python3'),
    timeoutMs: 5000,
  });

describe('child processes get only the environment they need', () => {
  it('a secret planted in process.env is absent from smbclient and the Python reader', async () => {
    const hot = folder();
    const files = (await hot.poll('job'))!;
    expect(await files.find((f) => f.name === 'a.json')!.read(1024)).toEqual(Buffer.from('{"ok":1}'));
    hot.close();
    for (const child of ['smbclient.env', 'python.env']) {
      const env = fs.readFileSync(path.join(dir, child), 'utf8');
      expect(env).not.toContain(PLANTED);
      expect(env).not.toContain('PLANTED_SECRET');
      expect(env).not.toContain('AUTH_TOKENS');
      expect(env).not.toContain('the-share-password');
      expect(env).toMatch(/^PATH=/m);
    }
    // The reader's request (its password included) arrives on stdin, with the bound it must hold.
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'python.stdin'), 'utf8'))).toMatchObject({
      password: 'the-share-password',
      max_bytes: 1024,
      path: ['Output', 'job', 'a.json'],
    });
  });

  it('childEnv keeps the named variables only, and adds what a child needs', () => {
    expect(childEnv({ USER: 'guest' }, { PATH: '/bin', HOME: '/root', SCAN_SMB_PASSWORD: 'x', USER: 'root' })).toEqual({
      PATH: '/bin',
      HOME: '/root',
      USER: 'guest',
    });
  });
});

describe('the listing', () => {
  it('a reparse point (`r`) is listed and refused unread; `s` and other lowercase attributes keep their names', async () => {
    const hot = folder();
    const files = (await hot.poll('job'))!;
    expect(files.map((f) => [f.name, f.size])).toEqual([
      ['a.json', 8],
      ['link.json', 12],
      ['sparse.json', 9],
    ]);
    fs.rmSync(path.join(dir, 'python.stdin'), { force: true });
    await expect(files[1].read(1024)).rejects.toThrow(new AnswerRefusedError('link.json is a reparse point (a link)'));
    expect(fs.existsSync(path.join(dir, 'python.stdin'))).toBe(false); // never opened
    hot.close();
  });
});

describe('put', () => {
  it.each(['a"b.pdf', 'a<b.pdf', 'a|b.pdf', 'ab:c.pdf'])(
    '%s: refused by the adapter itself, no command sent',
    async (name) => {
      fs.rmSync(path.join(dir, 'commands'), { force: true });
      const hot = folder();
      await expect(hot.put(name, Buffer.from('x'))).rejects.toBeInstanceOf(InvalidFileNameError);
      expect(fs.existsSync(path.join(dir, 'commands'))).toBe(false);
      hot.close();
    },
  );
});
