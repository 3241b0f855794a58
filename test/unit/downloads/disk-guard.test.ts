import { ConfigError } from '../../../lib/config/errors';
import {
  DEFAULT_DISK_RESERVE_BYTES,
  diskNeedsLook,
  diskProblem,
  loadDiskSettings,
  planDisk,
} from '../../../lib/downloads/disk-guard';
import { planActivate, planDetails } from '../../../lib/downloads/guards';
import { Download, toDto } from '../../../lib/downloads/model';
import { formatBytes } from '../../../lib/i18n';
import type { TorrentInfo } from '../../../lib/torrents/model';

/** The disk guard's rules (lib/downloads/disk-guard.ts) on plain values: what to hold, start and release. */

const GiB = 1024 ** 3;
const hash = (n: number) => n.toString(16).padStart(40, '0');

function download(n: number, over: Partial<Download> = {}): Download {
  return {
    id: `01m8vmvjn4ja6w8rp8pdhdjy${String(n).padStart(2, '0')}`,
    state: 'downloading',
    name: `d${n}`,
    infohashes: [{ infohash: hash(n), kind: 'v1' }],
    created_at: '2026-12-07T10:00:00.000Z',
    updated_at: '2026-12-07T10:00:00.000Z',
    revision: 1,
    ...over,
  };
}

function torrent(n: number, left: number, over: Partial<TorrentInfo> = {}): TorrentInfo {
  return {
    hash: hash(n),
    infohash_v1: hash(n),
    name: `d${n}`,
    state: 'downloading',
    progress: 0.1,
    added_on: 1,
    size: left + GiB,
    amount_left: left,
    ...over,
  };
}

const held = (n: number, over: Partial<Download> = {}) =>
  download(n, { state: 'paused', hold: 'disk_space', held_at: '2026-12-07T10:00:00.000Z', ...over });
const kinds = (plan: ReturnType<typeof planDisk>) => plan.actions.map((a) => `${a.kind}:${a.download.name}`);

describe('planDisk', () => {
  it('oldest first: the one that does not fit is held, a younger one that fits still runs', () => {
    // budget 10 GiB: d1 (6) fits, d2 (5) does not, d3 (3) fits in what is left.
    const plan = planDisk(
      [download(3), download(1), download(2)],
      [torrent(1, 6 * GiB), torrent(2, 5 * GiB), torrent(3, 3 * GiB)],
      15 * GiB,
      5 * GiB,
    );
    expect(kinds(plan)).toEqual(['hold:d2']);
    expect(plan).toMatchObject({ held: 1, neededBytes: 14 * GiB });
    expect(plan.actions[0]).toMatchObject({ needed: 5 * GiB });
  });

  it('a held download is started when it fits again, and released when a person started it', () => {
    const plan = planDisk(
      [held(1), held(2, { state: 'downloading' })],
      [torrent(1, GiB, { state: 'stoppedDL' }), torrent(2, GiB)],
      100 * GiB,
      5 * GiB,
    );
    expect(kinds(plan)).toEqual(['start:d1', 'release:d2']);
    expect(plan.held).toBe(0);
  });

  it('a held download a person started while it still does not fit is stopped again; one still paused is left', () => {
    const plan = planDisk(
      [held(1, { state: 'downloading' }), held(2)],
      [torrent(1, 50 * GiB), torrent(2, 50 * GiB, { state: 'pausedDL' })],
      10 * GiB,
      5 * GiB,
    );
    expect(kinds(plan)).toEqual(['stop-again:d1']);
    expect(plan.held).toBe(2);
  });

  it("a person's pause is theirs: not counted, never started, never held", () => {
    const plan = planDisk(
      [download(1, { state: 'paused' }), download(2)],
      [torrent(1, 90 * GiB, { state: 'pausedDL' }), torrent(2, 4 * GiB)],
      10 * GiB,
      5 * GiB,
    );
    expect(plan.actions).toEqual([]);
    expect(plan.neededBytes).toBe(4 * GiB);
  });

  it('size unknown (no metadata), finished, checking or missing: never held; a finished held one is released', () => {
    const plan = planDisk(
      [download(1), download(2), download(3), download(4), held(5), held(6)],
      [
        torrent(1, 0, { size: 0, state: 'metaDL' }),
        torrent(2, 90 * GiB, { state: 'checkingResumeData' }),
        torrent(3, 90 * GiB, { amount_left: undefined }),
        torrent(5, 0, { state: 'stoppedUP', progress: 1 }),
        torrent(6, 90 * GiB, { state: 'checkingDL' }),
      ],
      GiB,
      5 * GiB,
    );
    expect(kinds(plan)).toEqual(['release:d5']);
    // d6 is checking: it keeps its hold (and counts as held) until its state is known.
    expect(plan.held).toBe(1);
  });

  it('free space under the reserve holds every download that has bytes left (a negative budget)', () => {
    const plan = planDisk([download(1), download(2)], [torrent(1, 1), torrent(2, 1)], GiB, 5 * GiB);
    expect(kinds(plan)).toEqual(['hold:d1', 'hold:d2']);
  });

  it('a download whose torrent holds exactly the budget fits (the boundary is inclusive)', () => {
    expect(planDisk([download(1)], [torrent(1, 5 * GiB)], 10 * GiB, 5 * GiB).actions).toEqual([]);
    expect(kinds(planDisk([download(1)], [torrent(1, 5 * GiB + 1)], 10 * GiB, 5 * GiB))).toEqual(['hold:d1']);
  });
});

describe('diskNeedsLook', () => {
  it('reads nothing more while the running torrents fit and none is paused', () => {
    expect(diskNeedsLook([torrent(1, GiB), torrent(2, GiB)], 10 * GiB, 5 * GiB)).toBe(false);
    expect(diskNeedsLook([torrent(1, 3 * GiB), torrent(2, 3 * GiB)], 10 * GiB, 5 * GiB)).toBe(true);
    expect(diskNeedsLook([torrent(1, 0, { state: 'stoppedDL' })], 10 * GiB, 5 * GiB)).toBe(true);
    // A checking torrent's bytes left are not known yet.
    expect(diskNeedsLook([torrent(1, 90 * GiB, { state: 'checkingResumeData' })], 10 * GiB, 5 * GiB)).toBe(false);
  });
});

describe('DOWNLOAD_DISK_RESERVE', () => {
  it('bytes, binary units, off; the default is 5 GiB', () => {
    expect(loadDiskSettings({})).toEqual({ reserveBytes: DEFAULT_DISK_RESERVE_BYTES });
    expect(DEFAULT_DISK_RESERVE_BYTES).toBe(5 * GiB);
    expect(loadDiskSettings({ DOWNLOAD_DISK_RESERVE: '1048576' })).toEqual({ reserveBytes: 1048576 });
    expect(loadDiskSettings({ DOWNLOAD_DISK_RESERVE: '500 MiB' })).toEqual({ reserveBytes: 500 * 1024 ** 2 });
    expect(loadDiskSettings({ DOWNLOAD_DISK_RESERVE: '1.5GiB' })).toEqual({ reserveBytes: 1.5 * GiB });
    expect(loadDiskSettings({ DOWNLOAD_DISK_RESERVE: '0' })).toEqual({ reserveBytes: 0 });
    expect(loadDiskSettings({ DOWNLOAD_DISK_RESERVE: 'off' })).toEqual({ reserveBytes: null });
    // The largest number the pattern allows stays a safe integer.
    const huge = loadDiskSettings({ DOWNLOAD_DISK_RESERVE: '999999999999999TiB' }).reserveBytes!;
    expect(Number.isSafeInteger(huge)).toBe(true);
  });

  it.each(['5GB', '5 gib', '-1', '5e9', 'OFF', '1,5GiB', '5  GiB', '0x10', 'Infinity', '__proto__'])(
    'refuses %j by name',
    (value) => {
      expect(() => loadDiskSettings({ DOWNLOAD_DISK_RESERVE: value })).toThrow(ConfigError);
      expect(() => loadDiskSettings({ DOWNLOAD_DISK_RESERVE: value })).toThrow(/DOWNLOAD_DISK_RESERVE/);
    },
  );
});

describe('the hold on the download', () => {
  const hold = { reason: 'disk_space' as const, since: '2026-12-07T11:00:00.000Z', needed_bytes: 7, free_bytes: 3 };

  it('is set and cleared by the details write, shown while active, and dropped by an activation', () => {
    const set = planDetails(download(1, { state: 'paused' }), { hold }, '2026-12-07T11:00:00.000Z');
    if (!('next' in set)) throw new Error('expected a write');
    expect(toDto(set.next).hold).toEqual(hold);
    expect(planDetails(set.next, { hold }, 'later')).toEqual({ unchanged: set.next });
    expect(toDto({ ...set.next, state: 'completed' }).hold).toBeUndefined();

    const cleared = planDetails(set.next, { hold: null }, '2026-12-07T12:00:00.000Z');
    if (!('next' in cleared)) throw new Error('expected a write');
    expect(Object.keys(cleared.next).filter((k) => k.startsWith('hold') || k === 'held_at')).toEqual([]);

    const retried = planActivate({ ...set.next, state: 'failed' }, 'queued', '2026-12-07T12:00:00.000Z');
    if (!('next' in retried)) throw new Error('expected a write');
    expect(retried.next.hold).toBeUndefined();
  });

  it("says why in the operator's words only when the disk is a problem", () => {
    const record = { free_bytes: 20 * GiB, reserve_bytes: 5 * GiB, needed_bytes: GiB, held: 0, at: 'x' };
    expect(diskProblem(record)).toBeUndefined();
    expect(diskProblem({ ...record, held: 2 })).toBe(
      `20\u00a0GiB free, 5\u00a0GiB reserved, 1\u00a0GiB still to write, 2 held`,
    );
    expect(diskProblem({ ...record, free_bytes: GiB })).toMatch(/^1\u00a0GiB free/);
  });
});

describe('formatBytes', () => {
  it("qBittorrent's binary units in each language", () => {
    expect(formatBytes('en', 0)).toBe('0\u00a0B');
    expect(formatBytes('en', 1023)).toBe('1,023\u00a0B');
    expect(formatBytes('en', 1536)).toBe('1.5\u00a0KiB');
    expect(formatBytes('ru', 4.25 * GiB)).toBe('4,3\u00a0ГиБ');
    expect(formatBytes('en', 150 * GiB)).toBe('150\u00a0GiB');
    expect(formatBytes('en', 2 ** 70)).toBe('1,048,576\u00a0PiB');
    expect(formatBytes('en', -1)).toBe('—');
    expect(formatBytes('en', NaN)).toBe('—');
  });
});
