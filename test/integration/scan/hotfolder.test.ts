import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { HotFolder, hotFolderName, HotFolderUnavailableError, LocalHotFolder } from '../../../lib/scan/hotfolder';
import { InvalidFileNameError } from '../../../lib/names';
import { settle, SettleState } from '../../../lib/scan/settle';
import { SmbHotFolder } from '../../../lib/scan/smb-hotfolder';
import { Share, startSamba } from '../../support/samba';

/**
 * Both HotFolder implementations pass the same tests: LocalHotFolder on the
 * real filesystem, SmbHotFolder against a real Samba share on 127.0.0.1.
 * `root` is the folder on this machine that the scanning system would see.
 */
let share: Share;
let sambaDir: string;
beforeAll(async () => {
  sambaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'samba-'));
  share = await startSamba(sambaDir);
}, 60_000);
afterAll(async () => {
  await share.service.stop();
  fs.rmSync(sambaDir, { recursive: true, force: true });
});

const kinds: Array<[string, () => { root: string; make: (root: string) => HotFolder }]> = [
  [
    'LocalHotFolder',
    () => ({ root: fs.mkdtempSync(path.join(os.tmpdir(), 'hotfolder-')), make: (root) => new LocalHotFolder(root) }),
  ],
  [
    'SmbHotFolder',
    () => {
      for (const entry of fs.readdirSync(share.root))
        fs.rmSync(path.join(share.root, entry), { recursive: true, force: true });
      return { root: share.root, make: () => new SmbHotFolder({ ...share, timeoutMs: 10_000 }) };
    },
  ],
];

describe.each(kinds)('%s', (_kind, setup) => {
  let root: string;
  let newFolder: (root: string) => HotFolder;
  beforeEach(() => {
    ({ root, make: newFolder } = setup());
    fs.mkdirSync(path.join(root, 'Input'), { recursive: true });
  });
  afterEach(() => {
    if (root !== share.root) fs.rmSync(root, { recursive: true, force: true });
  });

  describe('put', () => {
    it('renames a complete file into Input/: a reader polling all along never sees a partial one', async () => {
      const folder = newFolder(root);
      const bytes = Buffer.alloc(8 * 1024 * 1024, 7);
      const seen = new Set<number>();
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          for (const name of fs.readdirSync(path.join(root, 'Input')))
            seen.add(fs.statSync(path.join(root, 'Input', name)).size);
          await new Promise((r) => setImmediate(r));
        }
      })();
      await folder.put('big.pdf', bytes);
      watching = false;
      await watcher;
      expect([...seen].every((size) => size === bytes.length)).toBe(true);
      expect(fs.readFileSync(path.join(root, 'Input', 'big.pdf')).equals(bytes)).toBe(true);
      expect(fs.readdirSync(path.join(root, 'Tmp'))).toEqual([]); // created on first write, left empty
    });

    it('creates a missing Input/ (and Tmp/) on put; healthy() means the root is there', async () => {
      fs.rmSync(path.join(root, 'Input'), { recursive: true });
      const folder = newFolder(root);
      expect(await folder.healthy()).toBe(true);
      await folder.put('a.pdf', Buffer.from('x'));
      expect(fs.readdirSync(path.join(root, 'Input'))).toEqual(['a.pdf']);
    });

    it('the longest inbox name (150 Cyrillic characters) fits through Tmp/', async () => {
      const name = hotFolderName(randomUUID(), `${'Я'.repeat(150)}.pdf`);
      await newFolder(root).put(name, Buffer.from('x'));
      expect(fs.readdirSync(path.join(root, 'Input'))).toEqual([name]);
    });

    it('is unavailable when the ROOT is gone, and writes nothing', async () => {
      if (root === share.root) return; // the share's own folder: covered by test/integration/scan/smb.test.ts
      fs.rmSync(root, { recursive: true });
      const folder = newFolder(root);
      await expect(folder.put('a.pdf', Buffer.from('x'))).rejects.toBeInstanceOf(HotFolderUnavailableError);
      expect(await folder.healthy()).toBe(false);
      expect(fs.existsSync(root)).toBe(false); // not re-created: a missing root is a missing share
    });

    it.each(['../escape.pdf', '/etc/passwd', '..', 'a/../../b', '.hidden', 'nul\0.pdf'])(
      'refuses the name %j and writes nothing',
      async (name) => {
        await expect(newFolder(root).put(name, Buffer.from('x'))).rejects.toBeInstanceOf(InvalidFileNameError);
        expect(fs.readdirSync(path.dirname(root)).filter((f) => f === 'escape.pdf')).toEqual([]);
        expect(fs.readdirSync(path.join(root, 'Input'))).toEqual([]);
      },
    );
  });

  describe('poll', () => {
    it('is null before Output/<job>/ exists, then lists only *.json, sorted', async () => {
      const folder = newFolder(root);
      const job = randomUUID();
      expect(await folder.poll(job)).toBeNull();
      const dir = path.join(root, 'Output', job);
      fs.mkdirSync(dir, { recursive: true });
      for (const [name, body] of [
        ['b.json', '{}'],
        ['a.json', '[1]'],
        ['.partial.json', '{'],
        ['notes.txt', 'x'],
      ])
        fs.writeFileSync(path.join(dir, name), body);
      const files = await folder.poll(job);
      expect(files!.map((f) => [f.name, f.size])).toEqual([
        ['a.json', 3],
        ['b.json', 2],
      ]);
      expect((await files![0].read(1024)).toString()).toBe('[1]');
      await expect(folder.poll('../Input')).rejects.toBeInstanceOf(InvalidFileNameError);
    });

    it('settles only once (name, size) stop changing for the window: a growing file and a pause', async () => {
      const folder = newFolder(root);
      const job = randomUUID();
      const dir = path.join(root, 'Output', job);
      fs.mkdirSync(dir, { recursive: true });
      const file = path.join(dir, 'a.json');
      const WINDOW = 2000;
      let state: SettleState | undefined;
      const pollAt = async (now: number) => {
        const result = settle(await folder.poll(job), state, now, WINDOW);
        if (!result.ready) state = result.state;
        return result.ready;
      };

      fs.writeFileSync(file, '{"a":');
      expect(await pollAt(0)).toBe(false);
      fs.appendFileSync(file, '1'); // still growing
      expect(await pollAt(2500)).toBe(false);
      fs.appendFileSync(file, '}');
      expect(await pollAt(3000)).toBe(false);
      expect(await pollAt(4000)).toBe(false); // stable for 1 s only
      // The scanner pauses, then writes the set's second file: the window starts again.
      fs.writeFileSync(path.join(dir, 'b.json'), '{}');
      expect(await pollAt(5500)).toBe(false);
      expect(await pollAt(7000)).toBe(false);
      expect(await pollAt(7500)).toBe(true);
    });
  });
});

describe('LocalHotFolder.changed (the early wake of the poll loop)', () => {
  let root: string;
  let folder: LocalHotFolder;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'hotfolder-watch-'));
    folder = new LocalHotFolder(root);
  });
  afterEach(() => {
    folder.close();
    fs.rmSync(root, { recursive: true, force: true });
  });
  // Bounds are loose (a loaded machine): "early" is well under the 20 s timeout.
  const timed = async (wait: Promise<void>) => {
    const began = Date.now();
    await wait;
    return Date.now() - began;
  };

  it('wakes when the scanner creates Output/ and when an answer folder lands, long before the timeout', async () => {
    await folder.changed(1); // starts watching (the root: no Output/ yet)
    await folder.changed(1);
    setTimeout(() => fs.mkdirSync(path.join(root, 'Output')), 50);
    expect(await timed(folder.changed(20_000))).toBeLessThan(10_000);
    await folder.changed(1); // now on Output/
    setTimeout(() => fs.mkdirSync(path.join(root, 'Output', randomUUID())), 50);
    expect(await timed(folder.changed(20_000))).toBeLessThan(10_000);
  });

  it('a change while nobody waits (during a pass) is not lost: the next wait returns at once', async () => {
    fs.mkdirSync(path.join(root, 'Output'));
    await folder.changed(1);
    await folder.changed(1);
    // The scanner's two steps: a staging folder (a pass woken by it finds nothing), then the rename into place.
    const staging = path.join(root, 'Output', '.staging-x');
    fs.mkdirSync(staging);
    expect(await timed(folder.changed(20_000))).toBeLessThan(10_000);
    fs.renameSync(staging, path.join(root, 'Output', randomUUID())); // lands while the pass runs
    await new Promise((r) => setTimeout(r, 200));
    expect(await timed(folder.changed(20_000))).toBeLessThan(10_000);
  });

  it('waits the whole timeout when nothing changes under Output/', async () => {
    fs.mkdirSync(path.join(root, 'Output'));
    await folder.changed(1);
    await folder.changed(1);
    fs.writeFileSync(path.join(root, 'Input-not-watched'), 'x'); // the root is not watched once Output/ is
    expect(await timed(folder.changed(300))).toBeGreaterThanOrEqual(250);
  });
});

describe('SmbHotFolder session', () => {
  let folder: SmbHotFolder;
  beforeEach(() => {
    for (const entry of fs.readdirSync(share.root))
      fs.rmSync(path.join(share.root, entry), { recursive: true, force: true });
    fs.mkdirSync(path.join(share.root, 'Output'));
    folder = new SmbHotFolder({ ...share, timeoutMs: 10_000 });
  });
  afterEach(() => folder.close());

  /** The smbd processes that serve a client connection (smbstatus lists them), not the listening parent. */
  const connectionPids = () =>
    execFileSync('smbstatus', ['--processes', `--configfile=${path.join(sambaDir, 'smb.conf')}`], { encoding: 'utf8' })
      .split('\n')
      .map((line) => /^(\d+)\s+root\s/.exec(line)?.[1])
      .filter((pid): pid is string => pid !== undefined)
      .map(Number);

  it('many calls, in parallel and in turn, go through one session', async () => {
    const job = randomUUID();
    fs.mkdirSync(path.join(share.root, 'Output', job));
    fs.writeFileSync(path.join(share.root, 'Output', job, 'a.json'), '{"a":1}');
    await Promise.all(Array.from({ length: 10 }, () => folder.poll(job)));
    for (let i = 0; i < 5; i++) await folder.put(`${randomUUID()}_x.pdf`, Buffer.from('%PDF'));
    const [answer] = (await folder.poll(job))!;
    expect((await answer.read(1024)).toString()).toBe('{"a":1}');
    expect(await folder.poll(randomUUID())).toBeNull();
    expect(folder.sessionsStarted).toBe(1);
    expect(fs.readdirSync(path.join(share.root, 'Input'))).toHaveLength(5);
  });

  it('a connection the server drops is replaced: the next listing and read still answer', async () => {
    const job = randomUUID();
    fs.mkdirSync(path.join(share.root, 'Output', job));
    fs.writeFileSync(path.join(share.root, 'Output', job, 'a.json'), '{"a":2}');
    expect(await folder.poll(job)).toHaveLength(1);
    const pids = connectionPids();
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) process.kill(pid, 'SIGKILL'); // the server side of our session dies
    const [answer] = (await folder.poll(job))!;
    expect((await answer.read(1024)).toString()).toBe('{"a":2}');
    expect(await folder.healthy()).toBe(true);
    expect(folder.sessionsStarted).toBe(2);
  });

  it('a session idle longer than idleMs is replaced before use', async () => {
    const idle = new SmbHotFolder({ ...share, timeoutMs: 10_000, idleMs: 50 });
    try {
      expect(await idle.poll(randomUUID())).toBeNull();
      await new Promise((r) => setTimeout(r, 200));
      expect(await idle.poll(randomUUID())).toBeNull();
      expect(idle.sessionsStarted).toBe(2);
    } finally {
      idle.close();
    }
  });
});
