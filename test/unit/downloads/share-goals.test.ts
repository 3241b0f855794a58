import fc from 'fast-check';
import { isoTime } from '../../../lib/clock';
import { ConfigError } from '../../../lib/config/errors';
import { InvalidTransitionError } from '../../../lib/downloads/errors';
import { planActivate, planShare } from '../../../lib/downloads/guards';
import { shareRemovalKey } from '../../../lib/downloads/keys';
import { Download, toDto } from '../../../lib/downloads/model';
import { parseIngest, parseIngestMultipart } from '../../../lib/downloads/requests';
import { shareFields } from '../../../lib/downloads/service';
import {
  clientLimits,
  DEFAULT_SHARE,
  goalOf,
  judgeShare,
  loadShareSettings,
  REMOVAL_LEASE_MS,
  seededS,
  ShareSettings,
} from '../../../lib/downloads/share-goals';
import { readTorrent } from '../../../lib/torrents/qbittorrent-answers';
import { classify } from '../../../lib/telegram/model';
import { marshall } from '@aws-sdk/util-dynamodb';
import { downloadToItem } from '../../../lib/downloads/keys';

/**
 * Seeding goals (lib/downloads/share-goals.ts) on plain values with an injected `now`: the settings, the
 * verdict with hostile client figures, the store's plans (guards.ts planShare), the request bounds and the
 * "seeding done" event.
 */
const T0 = Date.parse('2026-12-08T10:00:00.000Z');
const at = (s: number) => isoTime(T0 + s * 1000);
const H = 'a'.repeat(40);
const RATIO2: ShareSettings = { ratio: 2, timeS: 0, action: 'remove' };

function download(over: Partial<Download> = {}): Download {
  return {
    id: '01m8vmvjn4ja6w8rp8pdhdjykt',
    state: 'completed',
    name: 'film',
    infohashes: [{ infohash: H, kind: 'v1' }],
    created_at: at(-3600),
    updated_at: at(-60),
    revision: 3,
    ...over,
  };
}

describe('loadShareSettings', () => {
  it('defaults to no goal, keep', () => expect(loadShareSettings({})).toEqual(DEFAULT_SHARE));
  it('reads a ratio, a time and an action', () =>
    expect(
      loadShareSettings({
        DOWNLOAD_SHARE_RATIO: '1.5',
        DOWNLOAD_SHARE_TIME_S: '259200',
        DOWNLOAD_SHARE_ACTION: 'remove',
      }),
    ).toEqual({ ratio: 1.5, timeS: 259200, action: 'remove' }));
  it('off and 0 are no goal', () =>
    expect(loadShareSettings({ DOWNLOAD_SHARE_RATIO: 'off', DOWNLOAD_SHARE_TIME_S: '0' })).toEqual(DEFAULT_SHARE));
  it.each([
    ['DOWNLOAD_SHARE_RATIO', '-1'],
    ['DOWNLOAD_SHARE_RATIO', 'NaN'],
    ['DOWNLOAD_SHARE_RATIO', '1e3'],
    ['DOWNLOAD_SHARE_RATIO', '1001'],
    ['DOWNLOAD_SHARE_TIME_S', '-5'],
    ['DOWNLOAD_SHARE_TIME_S', '99999999999'],
    ['DOWNLOAD_SHARE_ACTION', 'Remove'],
    ['DOWNLOAD_SHARE_ACTION', 'delete'],
  ])('refuses %s=%s by name', (name, value) => {
    expect(() => loadShareSettings({ [name]: value })).toThrow(ConfigError);
    expect(() => loadShareSettings({ [name]: value })).toThrow(name);
  });
});

describe('judgeShare', () => {
  it('does nothing without a goal and keep (the default), nor for a download not completed', () => {
    expect(judgeShare(download(), { ratio: 50 }, DEFAULT_SHARE, T0)).toEqual({ action: 'none' });
    expect(judgeShare(download({ state: 'downloading' }), { ratio: 50 }, RATIO2, T0)).toEqual({ action: 'none' });
  });
  it('without a goal, a removing action acts at completion', () =>
    expect(judgeShare(download(), {}, { ratio: null, timeS: 0, action: 'remove_files' }, T0)).toEqual({
      action: 'met',
      removal: 'remove_files',
    }));
  it('starts the clock first, then meets the ratio at its boundary', () => {
    expect(judgeShare(download(), { ratio: 1.99 }, RATIO2, T0)).toEqual({ action: 'start' });
    const seeding = download({ seeding_since: at(-10) });
    expect(judgeShare(seeding, { ratio: 1.99 }, RATIO2, T0)).toEqual({ action: 'none' });
    expect(judgeShare(seeding, { ratio: 2 }, RATIO2, T0)).toEqual({ action: 'met', removal: 'remove' });
  });
  it('a ratio goal of 0 is met at once', () =>
    expect(judgeShare(download(), { ratio: 0 }, { ...RATIO2, ratio: 0 }, T0)).toMatchObject({ action: 'met' }));
  it("meets a time goal by its own clock when the client's seeding_time froze (4.5's idle seed)", () => {
    const goal: ShareSettings = { ratio: null, timeS: 60, action: 'remove' };
    const d = download({ seeding_since: at(-60) });
    expect(judgeShare(d, { seeding_time: 3, added_on: (T0 - 3600_000) / 1000 }, goal, T0 - 1000)).toEqual({
      action: 'none',
    });
    expect(judgeShare(d, { seeding_time: 3, added_on: (T0 - 3600_000) / 1000 }, goal, T0)).toMatchObject({
      action: 'met',
    });
  });
  it('the download’s own goal wins over the settings', () => {
    const d = download({ share_ratio: 5, share_action: 'keep', seeding_since: at(-1) });
    expect(judgeShare(d, { ratio: 3 }, RATIO2, T0)).toEqual({ action: 'none' });
    expect(judgeShare(d, { ratio: 5 }, RATIO2, T0)).toEqual({ action: 'met', removal: 'keep' });
  });
  it.each([NaN, -1, -Infinity, Infinity, Number.MAX_VALUE * -1])('a hostile ratio %p never meets a goal', (ratio) =>
    expect(judgeShare(download({ seeding_since: at(-1) }), { ratio }, RATIO2, T0)).toEqual({ action: 'none' }),
  );
  it("a huge seeding_time counts only up to the torrent's age in the client", () => {
    const goal: ShareSettings = { ratio: null, timeS: 86_400, action: 'remove_files' };
    const young = { seeding_time: 10 ** 15, added_on: (T0 - 120_000) / 1000 };
    expect(seededS(undefined, young, T0)).toBe(120);
    expect(judgeShare(download({ seeding_since: at(-1) }), young, goal, T0)).toEqual({ action: 'none' });
    expect(seededS(undefined, { seeding_time: NaN, added_on: NaN }, T0)).toBe(0);
    expect(seededS('not a time', { seeding_time: -5 }, T0)).toBe(0);
  });
  it('an intended removal is finished only after the lease (a poll that met it may still be at it); then never again', () => {
    const intended = download({ share_met_at: at(0), share_removal: 'remove_files' });
    expect(judgeShare(intended, {}, RATIO2, T0 + REMOVAL_LEASE_MS - 1)).toEqual({ action: 'none' });
    expect(judgeShare(intended, {}, RATIO2, T0 + REMOVAL_LEASE_MS)).toEqual({ action: 'remove', deleteFiles: true });
    expect(judgeShare({ ...intended, removed_at: at(1) }, {}, RATIO2, T0 + 10 ** 9)).toEqual({ action: 'none' });
    expect(judgeShare(download({ share_met_at: at(0) }), { ratio: 9 }, RATIO2, T0)).toEqual({ action: 'none' });
  });
  it('a stored goal outside the bounds falls back to the settings (a corrupted item)', () =>
    expect(
      goalOf({ share_ratio: -3, share_time_s: 1.5, share_action: 'nuke' as never }, { ...RATIO2, timeS: 7 }),
    ).toEqual({ ratio: 2, timeS: 7, action: 'remove' }));
  it('property: with neither figure meeting it, no verdict removes', () =>
    fc.assert(
      fc.property(fc.double(), fc.double(), fc.double({ min: 0, max: 1000, noNaN: true }), (ratio, seeding, goal) => {
        const v = judgeShare(
          download({ seeding_since: at(0) }),
          { ratio, seeding_time: seeding, added_on: T0 / 1000 },
          { ratio: goal, timeS: 0, action: 'remove' },
          T0,
        );
        return v.action === 'none' || (Number.isFinite(ratio) && ratio >= goal);
      }),
    ));
});

describe('clientLimits', () => {
  it('a ratio as it is, a time in whole minutes rounded up, nothing for no goal', () => {
    expect(clientLimits({ ratio: 1.5, timeS: 61, action: 'keep' })).toEqual({ ratioLimit: 1.5, seedingTimeLimit: 2 });
    expect(clientLimits({ ratio: 0, timeS: 0, action: 'remove' })).toEqual({ ratioLimit: 0 });
    expect(clientLimits(DEFAULT_SHARE)).toEqual({});
  });
});

describe('planShare', () => {
  it('starts the clock once; a second start writes nothing', () => {
    const d = planShare(download(), { seeding: true }, at(0));
    expect('next' in d && d.next.seeding_since).toBe(at(0));
    const again = planShare(download({ seeding_since: at(-5) }), { seeding: true }, at(0));
    expect(again).toEqual({ unchanged: download({ seeding_since: at(-5) }) });
  });
  it('met writes the intent with its marker in the same transaction; met twice is refused (the race lost)', () => {
    const met = planShare(download(), { met: true, removal: 'remove' }, at(0));
    if (!('write' in met)) throw new Error('expected a write');
    expect(met.next).toMatchObject({ share_met_at: at(0), share_removal: 'remove', revision: 4 });
    expect(met.write.writes[0].when).toEqual({ revisionIs: 3 });
    expect(met.write.writes[1]).toMatchObject({ put: { ...shareRemovalKey(met.next.id) } });
    const second = planShare(met.next, { met: true, removal: 'remove' }, at(1));
    expect('refused' in second && second.refused).toBeInstanceOf(InvalidTransitionError);
    const keep = planShare(download(), { met: true }, at(0));
    expect('write' in keep && keep.write.writes).toHaveLength(1);
  });
  it('removed is recorded once, deleting the marker; refused without an intent or on a download not completed', () => {
    const intended = download({ share_met_at: at(0), share_removal: 'remove_files' });
    const done = planShare(intended, { removed: true, files: true }, at(1));
    if (!('write' in done)) throw new Error('expected a write');
    expect(done.next).toMatchObject({ removed_at: at(1), removed_files: true });
    expect(done.write.writes[1]).toEqual({ delete: shareRemovalKey(intended.id) });
    expect(planShare(done.next, { removed: true, files: false }, at(2))).toEqual({ unchanged: done.next });
    expect('refused' in planShare(download(), { removed: true, files: false }, at(0))).toBe(true);
    expect('refused' in planShare(download({ state: 'failed' }), { seeding: true }, at(0))).toBe(true);
  });
  it('a retry (activation) starts the goal over and drops a pending marker', () => {
    const d = download({ state: 'failed', share_met_at: at(0), share_removal: 'remove', seeding_since: at(-9) });
    const a = planActivate(d, 'queued', at(5));
    if (!('write' in a)) throw new Error('expected a write');
    expect(a.next.share_met_at).toBeUndefined();
    expect(a.next.seeding_since).toBeUndefined();
    expect(a.write.writes.at(-1)).toEqual({ delete: shareRemovalKey(d.id) });
  });
});

describe('the request and the DTO', () => {
  it('POST /downloads takes the goal in JSON and multipart, bounded', () => {
    expect(parseIngest({ infohashes: [H], share_ratio: 1.5, share_time_s: 60, share_action: 'remove' })).toEqual({
      infohashes: [H],
      share_ratio: 1.5,
      share_time_s: 60,
      share_action: 'remove',
    });
    for (const bad of [{ share_ratio: -1 }, { share_ratio: 1001 }, { share_time_s: 1.5 }, { share_action: 'KEEP' }])
      expect(() => parseIngest({ infohashes: [H], ...bad })).toThrow();
    const part = (name: string, text: string) => ({ name, data: Buffer.from(text) });
    expect(
      parseIngestMultipart([
        { name: 'torrent', filename: 'a.torrent', data: Buffer.from('x') },
        part('share_ratio', '2'),
        part('share_action', 'remove_files'),
      ]),
    ).toMatchObject({ share_ratio: 2, share_action: 'remove_files' });
    for (const [n, v] of [
      ['share_ratio', 'NaN'],
      ['share_ratio', '-1'],
      ['share_time_s', '1e9'],
      ['share_action', '__proto__'],
    ])
      expect(() =>
        parseIngestMultipart([{ name: 'torrent', filename: 'a.torrent', data: Buffer.from('x') }, part(n, v)]),
      ).toThrow(n);
  });
  it('the download carries its goal resolved at creation; none for the default', () => {
    expect(shareFields({}, DEFAULT_SHARE)).toEqual({});
    expect(shareFields({ share_time_s: 60 }, RATIO2)).toEqual({
      share_ratio: 2,
      share_time_s: 60,
      share_action: 'remove',
    });
    expect(() => shareFields({ share_ratio: NaN })).toThrow(RangeError);
  });
  it('the DTO shows the goal and where it stands', () => {
    expect(toDto(download()).share).toBeUndefined();
    expect(
      toDto(download({ share_ratio: 2, share_action: 'remove', removed_at: at(1), share_met_at: at(0) })).share,
    ).toEqual({ ratio: 2, action: 'remove', met_at: at(0), removed_at: at(1), removed_files: false });
  });
  it('the client’s figures are read only when they are numbers of their kind', () => {
    const t = (o: Record<string, unknown>) => readTorrent({ hash: H, ...o });
    expect(t({ ratio: 1.25, seeding_time: 30 })).toMatchObject({ ratio: 1.25, seeding_time: 30 });
    for (const ratio of [-1, 'x', null, Infinity]) expect(t({ ratio }).ratio).toBeUndefined();
    for (const s of [-1, 1.5, '30', 2 ** 60]) expect(t({ seeding_time: s }).seeding_time).toBeUndefined();
  });
});

describe('the "seeding done" event', () => {
  const record = (next: Download, old: Download) => ({
    eventID: 'e1',
    eventName: 'MODIFY',
    dynamodb: {
      SequenceNumber: '1',
      NewImage: marshall(downloadToItem(next), { removeUndefinedValues: true }) as never,
      OldImage: marshall(downloadToItem(old), { removeUndefinedValues: true }) as never,
    },
  });
  it('once, when a goal is met; not for a removal at completion without a goal, nor for the removal record', () => {
    const seeding = download({ share_ratio: 2, share_action: 'remove', seeding_since: at(0) });
    const met = { ...seeding, share_met_at: at(1), share_removal: 'remove' as const };
    expect(classify(record(met, seeding))?.kind).toBe('seeding_done');
    expect(classify(record({ ...met, removed_at: at(2) }, met))).toBeUndefined();
    const noGoal = download({ share_action: 'remove' });
    expect(classify(record({ ...noGoal, share_met_at: at(1) }, noGoal))).toBeUndefined();
  });
});
