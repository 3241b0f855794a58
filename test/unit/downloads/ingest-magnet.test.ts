import { ingest, retry } from '../../../lib/downloads/service';
import type { DownloadStore } from '../../../lib/downloads/store';
import type { Download, NewDownload } from '../../../lib/downloads/model';
import type { Infohash } from '../../../lib/downloads/infohash';
import { InvalidMagnetError } from '../../../lib/downloads/errors';
import type { TorrentClient } from '../../../lib/torrents/client';
import { silentLogger } from '../../../lib/log';

/**
 * The magnet a torrent client receives is the one rebuilt from the parsed
 * fields, never the caller's string (issue 41: qBittorrent splits `urls` on
 * line breaks, so a raw string could make the user's client fetch any URL).
 */
const V1 = 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a';
const ID = '01jf0000000000000000000000';

function fakes(stored?: Partial<Download>) {
  const added: string[] = [];
  const created: NewDownload[] = [];
  const row = (input: Partial<Download>, hashes: Infohash[]): Download => ({
    id: ID,
    state: 'queued',
    name: 'x',
    infohashes: hashes,
    created_at: '2026-12-06T00:00:00.000Z',
    updated_at: '2026-12-06T00:00:00.000Z',
    revision: 1,
    ...input,
  });
  const store = {
    createDownloadIfNoActive: async (input: NewDownload, hashes: Infohash[]) => {
      created.push(input);
      return { created: true, download: row(input, hashes) };
    },
    get: async () => (stored ? row(stored, [{ infohash: V1, kind: 'v1' }]) : undefined),
    activateIfNoOtherActive: async () => row({ ...stored, state: 'queued' }, [{ infohash: V1, kind: 'v1' }]),
  } as unknown as DownloadStore;
  const torrents = {
    add: async (magnet: string) => {
      added.push(magnet);
    },
  } as unknown as TorrentClient;
  return { deps: { store, torrents, log: silentLogger }, added, created };
}

describe('the magnet the torrent client is given', () => {
  it('refuses a magnet with a line break before anything is stored or sent', async () => {
    const { deps, added, created } = fakes();
    const hostile = `magnet:?xt=urn:btih:${V1}&x.pe=\nhttp://169.254.169.254/latest/meta-data/`;
    await expect(ingest(deps, { magnet: hostile })).rejects.toThrow(InvalidMagnetError);
    expect(created).toEqual([]);
    expect(added).toEqual([]);
  });

  it('sends and stores the magnet rebuilt from its fields, not the caller string', async () => {
    const { deps, added, created } = fakes();
    const caller = `magnet:?xt=urn:btih:${V1.toUpperCase()}&x.pe=192.0.2.1:80&dn=Clip&tr=udp://t.example:6969&ws=http://10.0.0.1/`;
    await ingest(deps, { magnet: caller });
    const rebuilt = `magnet:?xt=urn:btih:${V1}&dn=Clip&tr=${encodeURIComponent('udp://t.example:6969')}&x.pe=192.0.2.1:80`;
    expect(added).toEqual([rebuilt]);
    expect(created[0].magnet).toBe(rebuilt);
  });

  it('rebuilds a magnet stored raw before the fix when it retries, and falls back to the hashes', async () => {
    const raw = fakes({ state: 'failed', name: 'Clip', magnet: `magnet:?xt=urn:btih:${V1}&x.pe=1.2.3.4:5&dn=Clip` });
    await retry(raw.deps, ID);
    expect(raw.added).toEqual([`magnet:?xt=urn:btih:${V1}&dn=Clip&x.pe=1.2.3.4:5`]);

    const broken = fakes({ state: 'failed', name: 'Clip', magnet: `magnet:?xt=urn:btih:${V1}&x.pe=\nhttp://evil/` });
    await retry(broken.deps, ID);
    expect(broken.added).toEqual([`magnet:?xt=urn:btih:${V1}&dn=Clip`]);
  });

  it('refuses a magnet naming an internal tracker or peer before anything is stored or sent; the setting allows it', async () => {
    const internal = `magnet:?xt=urn:btih:${V1}&dn=Clip&tr=http://169.254.169.254/latest/meta-data/&x.pe=127.0.0.1:8080`;
    const refused = fakes();
    await expect(ingest(refused.deps, { magnet: internal })).rejects.toThrow(/internal host: 169\.254\.169\.254/);
    expect(refused.created).toEqual([]);
    expect(refused.added).toEqual([]);

    const local = fakes();
    await ingest({ ...local.deps, magnets: { allowPrivateAddresses: true } }, { magnet: internal });
    expect(local.added).toEqual([
      `magnet:?xt=urn:btih:${V1}&dn=Clip&tr=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}&x.pe=127.0.0.1:8080`,
    ]);
  });

  it('retries a stored magnet naming an internal host with the hashes and name only', async () => {
    const stored = fakes({
      state: 'failed',
      name: 'Clip',
      magnet: `magnet:?xt=urn:btih:${V1}&x.pe=10.0.0.1:80&dn=Clip`,
    });
    await retry(stored.deps, ID);
    expect(stored.added).toEqual([`magnet:?xt=urn:btih:${V1}&dn=Clip`]);
  });
});
