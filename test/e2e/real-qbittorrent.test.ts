import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { QbtSession, RunningQbittorrent, startQbittorrent } from '../../tools/stack/qbittorrent';
import { clientIdOf, MadeTorrent, magnetOf, makeTorrent, TorrentKind } from '../../tools/torrent/torrent';
import { call } from '../support/http';
import { invokeScheduled } from '../support/stack';
import { messagesAbout, waitFor } from '../support/telegram';

/**
 * The service against a REAL qBittorrent (Debian's qbittorrent-nox 4.5.2) in
 * a closed loopback swarm: a client and a seeder of ours, both bound to `lo`
 * with DHT, LSD and PeX off (tools/stack/qbittorrent.ts), so nothing leaves
 * the machine. The stack's emulator passes the service's calls through to the
 * real client (PUT /emulator/upstream), so the service is the stack's own:
 * HTTP API, poll, stream, bot. Torrents are made here from random files, so
 * every run has new hashes; the hashes computed here must be the ones
 * qBittorrent reports. Waits are generous and bounded: the poll is driven by
 * the test (SCHEDULES_ENABLED=false), one invocation at a time.
 */
jest.setTimeout(600_000);

const dir = path.join(process.env.TEST_STATE_DIR ?? '/tmp', `real-qbt-${process.pid}`);
let client: RunningQbittorrent;
let seeder: RunningQbittorrent;
let peer: string;
const emulatorUrl = process.env.TORRENT_CLIENT_URL!;

async function upstream(method: 'PUT' | 'DELETE', body?: unknown) {
  const res = await fetch(`${emulatorUrl}/emulator/upstream`, {
    method,
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status !== 200) throw new Error(`emulator upstream: ${res.status} ${await res.text()}`);
}

const startClient = (keepTorrents: boolean, ports?: { webuiPort: number; torrentPort: number; password: string }) =>
  startQbittorrent({
    name: 'qbt-client',
    profileDir: path.join(dir, 'client'),
    logDir: dir,
    keepTorrents,
    ...ports,
  });

beforeAll(async () => {
  fs.mkdirSync(path.join(dir, 'files'), { recursive: true });
  [client, seeder] = await Promise.all([
    startClient(false),
    startQbittorrent({ name: 'qbt-seeder', profileDir: path.join(dir, 'seeder'), logDir: dir }),
  ]);
  peer = `127.0.0.1:${seeder.torrentPort}`;
  await upstream('PUT', { url: client.url, username: client.username, password: client.password });
});

afterAll(async () => {
  await upstream('DELETE').catch(() => undefined);
  await Promise.all([client?.stop(), seeder?.stop()]);
});

/** A torrent of a new random file, seeded by our seeder. */
async function seeded(kind: TorrentKind, bytes = 3_000_000): Promise<MadeTorrent> {
  const file = path.join(dir, 'files', `${kind}-${randomBytes(4).toString('hex')}.bin`);
  fs.writeFileSync(file, randomBytes(bytes));
  const made = makeTorrent(file, kind, `${file}.torrent`);
  await QbtSession.of(seeder).seed(made.torrentFile, path.dirname(file), clientIdOf(made));
  return made;
}

async function poll(): Promise<void> {
  const out = await invokeScheduled('downloadsPoll');
  if (out.FunctionError) throw new Error(`downloadsPoll failed: ${new TextDecoder().decode(out.Payload)}`);
}

/** Polls until the download is in `state` (each poll is one scheduled invocation), within a bound. */
async function pollUntil(id: string, state: string, boundMs = 180_000) {
  return waitFor(
    `download ${id} to be ${state}`,
    async () => {
      await poll();
      const { body } = await call('GET', `/downloads/${id}`);
      return body.state === state && body;
    },
    boundMs,
  );
}

const hashesOf = (made: MadeTorrent) =>
  [
    ...(made.v1 ? [{ infohash: made.v1, kind: 'v1' }] : []),
    ...(made.v2 ? [{ infohash: made.v2, kind: 'v2' }] : []),
  ].sort((a, b) => a.infohash.localeCompare(b.infohash));
const sorted = (hashes: Array<{ infohash: string; kind: string }>) =>
  [...hashes].sort((a, b) => a.infohash.localeCompare(b.infohash));

async function signedInCard(id: string): Promise<string> {
  const signin = await fetch(`${process.env.TEST_HTTP_URL}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: process.env.TEST_TOKEN_ALL! }),
  });
  const cookie = /tss_session=([^;]+)/.exec(signin.headers.get('set-cookie') ?? '')![1];
  const card = await fetch(`${process.env.TEST_HTTP_URL}/download/${id}`, {
    headers: { cookie: `tss_session=${cookie}` },
  });
  return card.text();
}

const completed: Array<{ id: string; made: MadeTorrent }> = [];

describe.each<TorrentKind>(['v1', 'v2', 'hybrid'])('a %s torrent made here, seeded on loopback', (kind) => {
  it('added through POST /downloads, it downloads for real and is completed in the service, on its card and in the bot', async () => {
    const made = await seeded(kind);
    const began = Date.now();
    const created = await call('POST', '/downloads', { magnet: magnetOf(made, { peers: [peer] }) });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(sorted(created.body.infohashes)).toEqual(hashesOf(made));

    const done = await pollUntil(id, 'completed');
    process.stdout.write(`[real-qbt] ${kind}: added → completed in the service in ${Date.now() - began} ms\n`);
    expect(sorted(done.infohashes)).toEqual(hashesOf(made));
    expect(done.progress).toBe(1);
    // What qBittorrent itself says of it: the hashes we computed, our category, our id as tag, the whole file.
    const [t] = await QbtSession.of(client).torrents(`?hashes=${clientIdOf(made)}`);
    expect({ v1: t.infohash_v1, v2: t.infohash_v2, category: t.category, tags: t.tags }).toEqual({
      v1: made.v1 ?? '',
      v2: made.v2 ?? '',
      category: 'torrent-scan-sync',
      tags: id,
    });
    expect(t.hash).toBe(clientIdOf(made));
    expect(fs.readFileSync(path.join(client.downloadDir, made.name))).toEqual(fs.readFileSync(made.file));

    expect(await signedInCard(id)).toMatch(/completed/i);
    const message = await waitFor('the bot to say completed', async () =>
      (await messagesAbout(id)).find((m) => m.text.includes('<b>Completed</b>')),
    );
    expect(message.text).toContain(made.name);
    completed.push({ id, made });
  });
});

it('a hybrid added by a btih-only magnet ends as ONE download with both full hashes after the switch', async () => {
  const made = await seeded('hybrid');
  const created = await call('POST', '/downloads', { magnet: magnetOf(made, { peers: [peer], btihOnly: true }) });
  expect(created.status).toBe(201);
  expect(created.body.infohashes).toEqual([{ infohash: made.v1, kind: 'v1' }]);
  const id = created.body.id as string;
  const done = await pollUntil(id, 'completed');
  expect(sorted(done.infohashes)).toEqual(hashesOf(made));
  // The client's id switched to the truncated v2; we never stored it.
  const [t] = await QbtSession.of(client).torrents(`?hashes=${made.v2!.slice(0, 40)}`);
  expect(t.infohash_v1).toBe(made.v1);
  expect(done.infohashes.map((h: { infohash: string }) => h.infohash)).not.toContain(made.v2!.slice(0, 40));
  const byV2 = await call('GET', `/downloads?q=${made.v2}`);
  expect(byV2.body.items.map((d: { id: string }) => d.id)).toEqual([id]);
  completed.push({ id, made });
});

it('cancel removes the torrent from the real client, and the next polls keep it cancelled', async () => {
  // No seeder for this one: it stays in metaDL, active, until cancelled.
  const hash = randomBytes(20).toString('hex');
  const created = await call('POST', '/downloads', { magnet: `magnet:?xt=urn:btih:${hash}&dn=never` });
  const id = created.body.id as string;
  await waitFor(
    'the torrent in the client',
    async () => (await QbtSession.of(client).torrents(`?hashes=${hash}`)).length,
  );
  await poll();
  expect((await call('POST', `/downloads/${id}/state`, { state: 'cancelled' })).status).toBe(200);
  expect(await QbtSession.of(client).torrents(`?hashes=${hash}`)).toEqual([]);
  for (let i = 0; i < 3; i++) await poll();
  expect((await call('GET', `/downloads/${id}`)).body.state).toBe('cancelled');
});

it('a torrent outside the category is not adopted', async () => {
  const hash = randomBytes(20).toString('hex');
  const form = new URLSearchParams({ urls: `magnet:?xt=urn:btih:${hash}&dn=theirs`, category: 'someone-else' });
  await QbtSession.of(client).call('POST', 'torrents/add', form);
  await waitFor(
    'their torrent in the client',
    async () => (await QbtSession.of(client).torrents(`?hashes=${hash}`)).length,
  );
  await poll();
  await poll();
  expect((await call('GET', `/downloads?q=${hash}`)).body.items).toEqual([]);
});

it('a restart of qbittorrent-nox flips no finished download back to active', async () => {
  expect(completed.length).toBeGreaterThanOrEqual(3);
  const ports = {
    webuiPort: Number(new URL(client.url).port),
    torrentPort: client.torrentPort,
    password: client.password,
  };
  await poll(); // the service's view is up to date before the restart
  await client.stop();
  client = await startClient(true, ports);
  // Poll while the client reads its resume data (real 4.5.2: checkingResumeData, progress 0, about a second).
  const states = new Set<string>();
  const until = Date.now() + 8_000;
  while (Date.now() < until) {
    for (const t of await QbtSession.of(client).torrents()) states.add(String(t.state));
    await poll();
    for (const { id } of completed) expect((await call('GET', `/downloads/${id}`)).body.state).toBe('completed');
  }
  process.stdout.write(`[real-qbt] states seen after the restart: ${[...states].join(', ')}\n`);
  for (let i = 0; i < 2; i++) await poll();
  for (const { id } of completed) {
    expect((await call('GET', `/downloads/${id}`)).body).toMatchObject({ state: 'completed', progress: 1 });
    // No "Active again" (nor a second "Completed") from the restart.
    const texts = (await messagesAbout(id)).map((m) => m.text);
    expect(texts.filter((t) => t.includes('<b>Active again</b>'))).toEqual([]);
    expect(texts.filter((t) => t.includes('<b>Completed</b>'))).toHaveLength(1);
  }
});
