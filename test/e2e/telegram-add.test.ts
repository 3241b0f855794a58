import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { SentMessage } from '../../emulator/telegram/emulator';
import { downloadsStore, v1 } from '../support/downloads';
import { call, emulatorTorrents } from '../support/http';
import {
  ALLOWED_USER,
  chats,
  messages,
  sendDocument,
  slowTorrentClient,
  type,
  waitFor,
  webhookDelivery,
} from '../support/telegram';
import { buildTorrent } from '../support/torrent-build';

/**
 * Adding from Telegram through the real stack: the emulator delivers a message (a magnet typed or pasted, a
 * .torrent sent as a document) to POST /telegram/webhook; the bot adds through lib/downloads (the same ingest
 * as POST /downloads), fetching a document by getFile and the file link from the emulator, and answers with
 * the card. The person's private chat with the bot is used: the configured groups also get the notifier's
 * "New download", which would be counted as an answer there.
 */
jest.setTimeout(120_000);

const { aws, table } = downloadsStore();
afterAll(() => aws.dynamodb.destroy());

const me = () => ALLOWED_USER();
const magnetOf = (hash: string, name?: string) =>
  `magnet:?xt=urn:btih:${hash}${name ? `&dn=${encodeURIComponent(name)}` : ''}`;
const idOf = (card: SentMessage) => /v1:o:([0-9a-z]{26})/.exec(JSON.stringify(card.reply_markup))?.[1];

async function downloadsWithHash(hash: string) {
  const found = await call('GET', `/downloads?q=${hash}`);
  expect(found.status).toBe(200);
  return found.body.items as Array<{ id: string; state: string; name: string }>;
}

/** Every item of the downloads table: "nothing written" (the stack suites run one at a time). */
async function tableItems(): Promise<number> {
  let count = 0;
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await aws.documents.send(new ScanCommand({ TableName: table, ExclusiveStartKey, Select: 'COUNT' }));
    count += page.Count ?? 0;
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return count;
}

describe('a magnet sent to the bot', () => {
  it('adds the download and answers with its card; the same magnet again answers the active one’s card', async () => {
    const hash = v1().infohash;
    const typed = await type(me(), me(), `please add this one: ${magnetOf(hash, 'Tears of Steel')} — thanks`);
    expect(typed.status).toBe(200);
    expect(typed.replies).toHaveLength(1);
    const card = typed.replies[0];
    expect(card.text).toContain('Tears of Steel');
    expect(card.text).toContain('Added.');
    expect(card.text).toContain(`hash: ${hash}`);
    const id = idOf(card)!;
    expect(card.reply_markup!.inline_keyboard.flat().map((b) => b.callback_data)).toEqual([
      `v1:r:${id}`,
      `v1:c:${id}`,
      `v1:o:${id}`,
    ]);
    expect(await downloadsWithHash(hash)).toEqual([expect.objectContaining({ id, name: 'Tears of Steel' })]);
    expect((await emulatorTorrents()).some((t) => t.hash === hash)).toBe(true);

    // In a caption too, and in Russian for a person whose app speaks it: the existing active download, once.
    const again = await sendDocument(me(), me(), {
      fileName: 'readme.txt',
      content: Buffer.from('x'),
      caption: `again: ${magnetOf(hash)}`,
      languageCode: 'ru',
    });
    expect(again.replies).toHaveLength(1);
    expect(again.replies[0].text).toContain('Уже загружается: вот её карточка; ничего не добавлено.');
    expect(idOf(again.replies[0])).toBe(id);
    expect(await downloadsWithHash(hash)).toHaveLength(1);
  });

  it('several magnets in one message: each added once, one answer with a part per magnet, a bad one said so', async () => {
    const [a, b, c] = [v1().infohash, v1().infohash, v1().infohash];
    const text = [
      `first ${magnetOf(a, 'alpha')}`,
      `second ${magnetOf(b, 'beta')}, third ${magnetOf(c)}`,
      `again ${magnetOf(a, 'alpha')} and a broken magnet:?xt=urn:btih:nothex`,
    ].join('\n');
    const typed = await type(me(), me(), text);
    expect(typed.replies).toHaveLength(1);
    const answer = typed.replies[0].text;
    expect(answer).toMatch(/^1\. alpha\n.*\nAdded\.\n2\. beta\n.*\nAdded\.\n3\. /s);
    expect(answer).toContain('4. Not a magnet link the bot can add; nothing was added.');
    expect(answer).not.toContain('5.');
    for (const hash of [a, b, c]) expect(await downloadsWithHash(hash)).toHaveLength(1);
  });

  it('from a chat the bot does not serve, or a member who may not change anything: nothing added', async () => {
    const hash = v1().infohash;
    const before = await tableItems();
    const stranger = await type(-999, 777, magnetOf(hash));
    expect(stranger.replies.map((m) => m.text)).toEqual([expect.stringMatching(/only serves/)]);
    const member = await type(chats()[0], 777, `look ${magnetOf(hash)}`);
    // A configured group: the notifier's status messages of the downloads added above may land meanwhile.
    const replies = member.replies.filter((m) => !/^New download: /.test(m.text));
    expect(replies.map((m) => m.text)).toEqual([
      'Only the people this bot was set up for can add downloads; nothing was added.',
    ]);
    expect(await downloadsWithHash(hash)).toEqual([]);
    expect(await tableItems()).toBe(before);
  });
});

describe('a magnet Telegram delivers again', () => {
  afterEach(async () => {
    await slowTorrentClient(0);
    await webhookDelivery(10_000, 1000, 3);
  });

  it('because the webhook was slow: added once, answered once', async () => {
    const hash = v1().infohash;
    await slowTorrentClient(3000);
    await webhookDelivery(1000, 500, 12);
    const typed = await type(me(), me(), magnetOf(hash, 'slow add'));
    // The first delivery timed out while it was adding (holding the update's lease); the next ones were answered
    // 503 until it was done, then one was answered 200 and did nothing.
    expect(typed.status).toBe(200);
    expect(typed.deliveries).toBeGreaterThanOrEqual(3);
    const cards = async () => (await messages(me())).filter((m) => m.text.includes(hash));
    await waitFor('the answer', async () => (await cards()).length > 0);
    await new Promise((r) => setTimeout(r, 3000)); // a second handling would have answered by now
    expect((await cards()).map((m) => m.text.split('\n').at(-2))).toEqual(['Added.']);
    expect(await downloadsWithHash(hash)).toHaveLength(1);
  });
});

describe('a .torrent sent as a document', () => {
  it.each(['v1', 'hybrid'] as const)(
    'a %s file: fetched by getFile and its link, added as the file (metadata at once), the card answered',
    async (kind) => {
      const built = buildTorrent(kind, { name: `tg-${kind}.bin` });
      const sent = await sendDocument(me(), me(), { fileName: 'My Film.torrent', content: built.file });
      expect(sent.status).toBe(200);
      expect(sent.replies).toHaveLength(1);
      expect(sent.replies[0].text).toContain(`tg-${kind}.bin`);
      expect(sent.replies[0].text).toContain('Added.');
      const id = idOf(sent.replies[0])!;
      const download = (await call('GET', `/downloads/${id}`)).body;
      expect(download.infohashes.map((h: { infohash: string }) => h.infohash)).toEqual(
        [built.v1, built.v2].filter(Boolean),
      );
      const inClient = (await emulatorTorrents()).find((t) => t.infohash_v1 === built.v1);
      expect(inClient).toMatchObject({ tags: id, has_metadata: true });

      // The same file again (a mime type, no .torrent name): the active download's card.
      const again = await sendDocument(me(), me(), {
        fileName: 'x.bin',
        mimeType: 'application/x-bittorrent',
        content: built.file,
      });
      expect(again.replies[0].text).toContain('Already being downloaded');
      expect(idOf(again.replies[0])).toBe(id);
    },
  );

  it('hostile files: oversize (declared, over the Bot API’s 20 MB, or lying about its size) and not bencode: answered, nothing written', async () => {
    const before = await tableItems();
    const cases: Array<[Parameters<typeof sendDocument>[2], string]> = [
      [{ size: 10 * 1024 * 1024 + 1 }, 'The file is larger than 10 MiB; nothing was added.'],
      [{ size: 21 * 1024 * 1024 }, 'The file is larger than 10 MiB; nothing was added.'],
      // Says 1 KB, sends 10 MiB + 1 without a Content-Length: cut at the bound while reading.
      [{ size: 10 * 1024 * 1024 + 1, declaredSize: 1000, chunked: true }, 'The file is larger than 10 MiB'],
      [
        { content: Buffer.from('this is not bencode at all') },
        'Not a .torrent file the bot can add; nothing was added.',
      ],
      [{ content: Buffer.from('d4:infoi1ee') }, 'Not a .torrent file the bot can add'],
    ];
    for (const [opts, words] of cases) {
      const sent = await sendDocument(me(), me(), opts);
      expect(sent.status).toBe(200);
      expect(sent.replies.map((m) => m.text)).toEqual([expect.stringContaining(words)]);
    }
    const ru = await sendDocument(me(), me(), { content: Buffer.from('garbage'), languageCode: 'ru' });
    expect(ru.replies[0].text).toBe('Этот файл не .torrent, который бот может добавить; ничего не добавлено.');
    // A document that is not a .torrent at all is not for the bot: no answer.
    expect((await sendDocument(me(), me(), { fileName: 'notes.pdf', content: Buffer.from('%PDF') })).replies).toEqual(
      [],
    );
    expect(await tableItems()).toBe(before);
  });
});
