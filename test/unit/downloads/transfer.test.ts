import { createFormat, formatSeconds, formatSpeed } from '../../../lib/i18n';
import type { Download } from '../../../lib/downloads/model';
import { INFINITE_ETA_S, transferDue, transferOf } from '../../../lib/downloads/transfer';
import { planDetails } from '../../../lib/downloads/guards';
import { readTorrent } from '../../../lib/torrents/qbittorrent-answers';
import type { TorrentInfo } from '../../../lib/torrents/model';

const torrent = (over: Partial<TorrentInfo> = {}): TorrentInfo => ({
  hash: 'ab'.repeat(20),
  name: 'x',
  state: 'downloading',
  progress: 0.5,
  added_on: 1,
  size: 4 * 1024 ** 3,
  downloaded: 2 * 1024 ** 3,
  dlspeed: 1_572_864,
  upspeed: 20_480,
  eta: 1365,
  num_seeds: 12,
  num_leechs: 3,
  ratio: 0.1234,
  ...over,
});

const download = (over: Partial<Download> = {}): Download => ({
  id: '01jf0000000000000000000000',
  state: 'downloading',
  name: 'x',
  infohashes: [],
  created_at: '2026-12-08T00:00:00.000Z',
  updated_at: '2026-12-08T00:00:00.000Z',
  revision: 1,
  ...over,
});

describe('the client figures, sanitised', () => {
  it('keeps the figures the client gave, the ratio to 3 decimals', () => {
    expect(transferOf(torrent())).toEqual({
      size_bytes: 4 * 1024 ** 3,
      downloaded_bytes: 2 * 1024 ** 3,
      dl_speed: 1_572_864,
      up_speed: 20_480,
      eta_s: 1365,
      seeds: 12,
      peers: 3,
      ratio: 0.123,
    });
  });

  it("drops NaN, negative, fractional and huge counts, qBittorrent's infinite ETA; caps the ratio", () => {
    const hostile = transferOf(
      torrent({
        size: NaN,
        downloaded: -1,
        dlspeed: 1.5,
        upspeed: 2 ** 60,
        eta: INFINITE_ETA_S,
        num_seeds: Infinity,
        num_leechs: -3,
        ratio: 1e300,
      }),
    );
    expect(hostile).toEqual({ ratio: 9999 });
    expect(transferOf(torrent({ ratio: -1, eta: INFINITE_ETA_S + 1 }))?.ratio).toBeUndefined();
    expect(transferOf({ hash: 'a', name: '', state: '', progress: 0, added_on: 0 })).toBeUndefined();
  });

  it('reads only numbers from the answer: strings, objects and prototype keys never travel', () => {
    const read = readTorrent(
      JSON.parse(
        '{"hash":"AB","dlspeed":"100","upspeed":{"valueOf":1},"eta":-5,"num_seeds":3,"ratio":"1","__proto__":{"dlspeed":7}}',
      ),
    );
    expect(read.dlspeed).toBeUndefined();
    expect(read.upspeed).toBeUndefined();
    expect(read.eta).toBeUndefined();
    expect(read.ratio).toBeUndefined();
    expect(read.num_seeds).toBe(3);
  });
});

describe('the write bound (decision 408)', () => {
  const now = Date.parse('2026-12-08T01:00:00.000Z');
  const figures = transferOf(torrent())!;
  it('writes new figures alongside another write at once, alone only past the interval', () => {
    const fresh = download({ ...figures, dl_speed: 1, transfer_at: new Date(now - 30_000).toISOString() });
    expect(transferDue(fresh, figures, true, now)).toBe(true);
    expect(transferDue(fresh, figures, false, now)).toBe(false);
    expect(transferDue(fresh, figures, false, now + 120_000)).toBe(true);
    expect(transferDue(download(), figures, false, now)).toBe(true);
    // The same figures are never written again, whatever the age.
    const same = download({ ...figures, transfer_at: '2026-01-01T00:00:00.000Z' });
    expect(transferDue(same, figures, true, now)).toBe(false);
    // An unreadable stamp counts as old.
    expect(transferDue(download({ transfer_at: 'garbage' }), figures, false, now)).toBe(true);
  });

  it('a figures write replaces the figures whole and never touches the state', () => {
    const current = download({ state: 'paused', seeds: 4, eta_s: 10 });
    const plan = planDetails(current, { transfer: { figures: { size_bytes: 5 }, at: 'T' } }, 'U');
    expect('next' in plan && plan.next).toMatchObject({
      state: 'paused',
      size_bytes: 5,
      transfer_at: 'T',
      revision: 2,
    });
    expect('next' in plan && plan.next.seeds).toBeUndefined();
    expect('next' in plan && plan.next.eta_s).toBeUndefined();
    const again = planDetails(
      { ...current, size_bytes: 5 },
      { transfer: { figures: { size_bytes: 5 }, at: 'T' } },
      'U',
    );
    // Only the stored figures differ (seeds, eta): written; the same ones are not.
    expect('next' in again).toBe(true);
    const same = planDetails(
      download({ size_bytes: 5, transfer_at: 'T' }),
      { transfer: { figures: { size_bytes: 5 }, at: 'V' } },
      'U',
    );
    expect('unchanged' in same).toBe(true);
  });
});

describe('sizes, speeds and durations in the person’s language', () => {
  it('en and ru', () => {
    expect(formatSpeed('en', 1_572_864)).toBe('1.5\u00a0MiB/s');
    expect(formatSpeed('ru', 1_572_864)).toBe('1,5\u00a0МиБ/с');
    expect(formatSeconds('en', 1365)).toBe('22\u00a0min 45\u00a0s');
    expect(formatSeconds('ru', 7500)).toBe('2\u00a0ч 5\u00a0мин');
    expect(formatSeconds('en', 90_000)).toBe('1\u00a0d 1\u00a0h');
    expect(formatSeconds('en', 7200)).toBe('2\u00a0h');
    expect(formatSeconds('ru', 0)).toBe('0\u00a0с');
    expect(formatSeconds('en', NaN)).toBe('—');
    expect(createFormat('ru').seconds(45)).toBe('45\u00a0с');
  });
});
