import { downloadFromItem, downloadToItem, guardItem, legacyIdItem, membershipItem } from '../../../lib/downloads/keys';
import type { Download } from '../../../lib/downloads/model';

const hash = 'ab'.repeat(20);
const download: Download = {
  id: '01kbhd0000000000000000000a',
  state: 'queued',
  name: 'Sintel',
  infohashes: [{ infohash: hash, kind: 'v1' }],
  created_at: '2026-12-03T08:00:00.000Z',
  updated_at: '2026-12-03T08:00:00.000Z',
  revision: 1,
};

// Whatever an object carries beside its named fields (a hostile body spread into it, a stale item
// read back) never chooses an item's keys and is never stored.
describe('items are built from named fields, keys last', () => {
  const hostile = { PK: 'DL#someone-else', SK: 'META', GSI1PK: 'DL', GSI1SK: 'zzz', entity: 'guard', extra: 'x' };

  it('a download', () => {
    const item = downloadToItem({ ...download, ...hostile } as Download);
    expect(item).toMatchObject({ PK: `DL#${download.id}`, SK: 'META', GSI1PK: 'DL', GSI1SK: download.id });
    expect(item).toMatchObject({ entity: 'download', name_lc: 'sintel' });
    expect(item).not.toHaveProperty('extra');
    expect(downloadFromItem(item)).toEqual(download);
  });

  it('a membership, a guard and a legacy id', () => {
    const member = membershipItem(
      { infohash: hash, kind: 'v1', ...hostile } as never,
      download.id,
      download.created_at,
    );
    expect(member).toEqual({
      entity: 'membership',
      download_id: download.id,
      infohash: hash,
      kind: 'v1',
      created_at: download.created_at,
      PK: `IH#${hash}`,
      SK: `DL#${download.id}`,
      GSI2PK: 'IHP#a',
      GSI2SK: `${hash}#${download.id}`,
    });
    expect(guardItem(hash, download.id, download.created_at)).toMatchObject({ PK: `IH#${hash}`, SK: 'ACTIVE' });
    expect(legacyIdItem('42', download.id)).toMatchObject({ PK: 'LEGACY', SK: `ID#${'42'.padStart(20, '0')}` });
    expect(() => legacyIdItem('PK#1', download.id)).toThrow(RangeError);
  });
});
