import { UPDATE_LEASE_MS } from '../../../lib/telegram/bot';
import { TORRENT_DOCUMENT_BYTES } from '../../../lib/telegram/add';
import { buildTorrent } from '../../support/torrent-build';
import { ALLOWED, harness, ID, MEMBER, message } from './bot-harness';

/**
 * Adding from Telegram in-process (lib/telegram/add.ts): what a message writes and says, across a handling
 * that dies between the create and the answer, a member who may not add, and documents whose sizes lie.
 */
const HASH = 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a';
const MAGNET = `magnet:?xt=urn:btih:${HASH}&dn=clip`;
const changes = (h: ReturnType<typeof harness>) => h.writes.filter((w) => !w.startsWith('update:'));
const sends = (h: ReturnType<typeof harness>) =>
  h.calls.filter((c) => c.method === 'sendMessage').map((c) => String(c.payload.text));
const torrentDoc = (size?: number) => ({
  file_id: 'f',
  file_unique_id: 'u',
  file_name: 'a.torrent',
  ...(size !== undefined ? { file_size: size } : {}),
});

describe('a magnet sent to the bot', () => {
  it('whose handling died after the create converges: one download, one answer (its card), nothing on later deliveries', async () => {
    const h = harness();
    const update = message({ text: `add ${MAGNET} please` }, ALLOWED);
    h.addStalls = true;
    void h.handle(update); // the invocation dies inside the torrent client's add, after the download was written
    await new Promise((r) => setTimeout(r, 10));
    expect(changes(h)).toEqual(['create', 'torrent_add']);
    expect(sends(h)).toEqual([]);

    // Telegram delivers it again once the webhook's answer is overdue; the dead handling's lease is over.
    h.addStalls = false;
    h.clock += UPDATE_LEASE_MS + 1;
    await h.handle(update);
    expect(changes(h)).toEqual(['create', 'torrent_add']);
    expect(sends(h)).toEqual([expect.stringContaining('Already being downloaded: this is its card')]);
    const card = h.calls.find((c) => c.method === 'sendMessage')!.payload;
    expect(JSON.stringify(card.reply_markup)).toContain(`v1:o:${ID}`);

    h.clock += UPDATE_LEASE_MS + 1;
    await h.handle(update);
    expect(sends(h)).toHaveLength(1);
  });

  it('from a member of a served chat who may not change anything: refused before any write, the ledger included', async () => {
    const h = harness();
    await h.handle(message({ text: MAGNET }, MEMBER));
    expect(h.writes).toEqual([]);
    expect(sends(h)).toEqual(['Only the people this bot was set up for can add downloads; nothing was added.']);
  });

  it('a command that carries a magnet is the command’s, not an add', async () => {
    const h = harness();
    await h.handle(message({ text: `/nosuchcommand ${MAGNET}` }, MEMBER));
    expect(changes(h)).toEqual([]);
  });
});

describe('a .torrent sent as a document', () => {
  const file = buildTorrent('v1', { name: 'doc.bin' }).file;

  it('is fetched from the link under the bot’s API root and added; the link is never in the answer', async () => {
    const h = harness();
    h.file.size = file.length;
    h.fetchFile = async () =>
      new Response(new Uint8Array(file), { headers: { 'content-length': String(file.length) } });
    await h.handle(message({ document: torrentDoc(file.length) }, ALLOWED));
    expect(h.fetched).toEqual(['http://bot-api.test/file/bot1:test/documents/file_1.torrent']);
    expect(changes(h)).toEqual(['create', 'torrent_add']);
    expect(sends(h)).toEqual([expect.stringContaining('Added.')]);
    expect(sends(h)[0]).not.toContain('1:test');
  });

  it('over the bound by its declared size: refused before getFile', async () => {
    const h = harness();
    await h.handle(message({ document: torrentDoc(TORRENT_DOCUMENT_BYTES + 1) }, ALLOWED, undefined, 'ru'));
    expect(h.calls.map((c) => c.method)).toEqual(['sendMessage']);
    expect(sends(h)).toEqual(['Файл больше 10 МиБ; ничего не добавлено.']);
    expect(changes(h)).toEqual([]);
  });

  it('over the bound by the size getFile answers: refused before the download', async () => {
    const h = harness();
    h.file.size = TORRENT_DOCUMENT_BYTES + 1;
    await h.handle(message({ document: torrentDoc(1000) }, ALLOWED));
    expect(h.fetched).toEqual([]);
    expect(sends(h)).toEqual(['The file is larger than 10 MiB; nothing was added.']);
  });

  it('sending more than it says (no Content-Length, or a false one): reading stops at the bound, nothing written', async () => {
    for (const headers of [{}, { 'content-length': '1000' }] as Array<Record<string, string>>) {
      const h = harness();
      let served = 0;
      const piece = new Uint8Array(1024 * 1024);
      h.fetchFile = async () =>
        new Response(
          new ReadableStream({
            pull(controller) {
              served += piece.length;
              controller.enqueue(piece); // endless
            },
          }),
          { headers },
        );
      await h.handle(message({ document: torrentDoc(1000) }, ALLOWED));
      expect(sends(h)).toEqual(['The file is larger than 10 MiB; nothing was added.']);
      expect(served).toBeLessThanOrEqual(TORRENT_DOCUMENT_BYTES + 3 * piece.length);
      expect(changes(h)).toEqual([]);
    }
  });

  it('a link that answers an error, or a file_path that climbs: "could not be fetched", nothing written', async () => {
    const h = harness();
    await h.handle(message({ document: torrentDoc(10) }, ALLOWED));
    h.file.path = '../../secret';
    await h.handle(message({ document: torrentDoc(10) }, ALLOWED));
    expect(h.fetched).toHaveLength(1);
    expect(sends(h)).toEqual([
      'The file could not be fetched from Telegram; nothing was added. Send it again.',
      'The file could not be fetched from Telegram; nothing was added. Send it again.',
    ]);
    expect(changes(h)).toEqual([]);
  });
});
