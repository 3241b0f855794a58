import { pbkdf2Sync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ensureSystemDep } from './system-deps';
import { freePort, httpAnswers } from './ports';
import { RunningService, startProcess } from './process';

/**
 * A real qBittorrent (Debian's qbittorrent-nox) with a profile of its own:
 * the stack's torrent client, the seeder of `npm run torrent:seed`, and the
 * swarm of the real-client tests. Nothing in it is the user's: the profile
 * lives under .stack/, the WebUI password is made per start and written into
 * qBittorrent.conf as its PBKDF2 form, and the WebUI listens on loopback only.
 *
 * By default the swarm is CLOSED: the BitTorrent side is bound to `lo`, and
 * DHT, local peer discovery, PeX and port forwarding are off, so nothing
 * leaves the machine; peers are given by hand (a magnet's `x.pe`, or
 * torrents/addPeers). `publicSwarm` (QBT_PUBLIC_SWARM=true) opens it: any
 * interface, DHT, LSD and PeX on, for real downloads from the internet.
 */

export interface QbittorrentOptions {
  name: string;
  /** The profile directory (qBittorrent/config, qBittorrent/data, downloads/). */
  profileDir: string;
  logDir: string;
  webuiPort?: number;
  torrentPort?: number;
  username?: string;
  password?: string;
  /** Open the swarm to the internet (QBT_PUBLIC_SWARM=true). Never in tests. */
  publicSwarm?: boolean;
  /** Keep the torrents of an earlier run of this profile (resume data); by default the profile starts empty. */
  keepTorrents?: boolean;
  say?: (line: string) => void;
}

export interface RunningQbittorrent extends RunningService {
  /** The WebUI / Web API base URL (loopback). */
  url: string;
  username: string;
  password: string;
  /** The BitTorrent listen port: peers reach it at 127.0.0.1:<torrentPort>. */
  torrentPort: number;
  /** Where it saves what it downloads. */
  downloadDir: string;
  profileDir: string;
}

/** qBittorrent's WebUI\Password_PBKDF2: PBKDF2-HMAC-SHA512, 100,000 iterations, a 16-byte salt, a 64-byte key. */
export function passwordPbkdf2(password: string, salt = randomBytes(16)): string {
  const key = pbkdf2Sync(password, salt, 100_000, 64, 'sha512');
  return `"@ByteArray(${salt.toString('base64')}:${key.toString('base64')})"`;
}

/** The qBittorrent.conf of a profile (4.5's keys; later versions read them too). */
export function qbittorrentConf(o: {
  webuiPort: number;
  torrentPort: number;
  username: string;
  password: string;
  downloadDir: string;
  publicSwarm: boolean;
}): string {
  const closed = !o.publicSwarm;
  const lines = [
    '[LegalNotice]',
    'Accepted=true',
    '',
    '[BitTorrent]',
    `Session\\DHTEnabled=${!closed}`,
    `Session\\LSDEnabled=${!closed}`,
    `Session\\PeXEnabled=${!closed}`,
    ...(closed ? ['Session\\Interface=lo', 'Session\\InterfaceName=lo', 'Session\\InterfaceAddress=127.0.0.1'] : []),
    `Session\\Port=${o.torrentPort}`,
    // Queueing off: a queued torrent takes no peers (real 4.5.2), and nothing here needs a queue.
    'Session\\QueueingSystemEnabled=false',
    `Session\\DefaultSavePath=${o.downloadDir}`,
    'Session\\TempPathEnabled=false',
    'Session\\AddTrackersEnabled=false',
    '',
    '[Network]',
    'PortForwardingEnabled=false',
    '',
    '[Preferences]',
    'Connection\\UPnP=false',
    // Otherwise it downloads an IP geolocation database from the internet at start: nothing leaves the machine.
    'Connection\\ResolvePeerCountries=false',
    'General\\UseRandomPort=false',
    'WebUI\\Address=127.0.0.1',
    `WebUI\\Port=${o.webuiPort}`,
    'WebUI\\UseUPnP=false',
    // No bypass for localhost: the service logs in as it would against the user's client.
    'WebUI\\LocalHostAuth=true',
    `WebUI\\Username=${o.username}`,
    `WebUI\\Password_PBKDF2=${passwordPbkdf2(o.password)}`,
    '',
  ];
  return lines.join('\n');
}

export async function startQbittorrent(o: QbittorrentOptions): Promise<RunningQbittorrent> {
  const say = o.say ?? (() => undefined);
  const bin = ensureSystemDep('qbittorrent', say);
  const webuiPort = o.webuiPort ?? (await freePort());
  const torrentPort = o.torrentPort ?? (await freePort());
  const username = o.username ?? 'admin';
  const password = o.password ?? randomBytes(12).toString('hex');
  const downloadDir = path.join(o.profileDir, 'downloads');
  const configDir = path.join(o.profileDir, 'qBittorrent', 'config');
  if (!o.keepTorrents) fs.rmSync(path.join(o.profileDir, 'qBittorrent'), { recursive: true, force: true });
  fs.mkdirSync(configDir, { recursive: true, mode: 0o700 });
  fs.mkdirSync(downloadDir, { recursive: true });
  // Rewritten at every start: a new password, the ports of this run (0600: it holds the password's hash).
  fs.writeFileSync(
    path.join(configDir, 'qBittorrent.conf'),
    qbittorrentConf({ webuiPort, torrentPort, username, password, downloadDir, publicSwarm: !!o.publicSwarm }),
    { mode: 0o600 },
  );
  const url = `http://127.0.0.1:${webuiPort}`;
  const service = await startProcess({
    name: o.name,
    command: bin,
    args: [`--profile=${o.profileDir}`],
    // A HOME of its own: qbittorrent-nox must never read or write the user's ~/.config/qBittorrent.
    env: { ...process.env, HOME: o.profileDir, XDG_CONFIG_HOME: o.profileDir, XDG_DATA_HOME: o.profileDir },
    logFile: path.join(o.logDir, `${o.name}.log`),
    url,
    ready: () => httpAnswers(`${url}/api/v2/app/webapiVersion`),
    port: webuiPort,
    readyTimeoutMs: 60_000,
  });
  return Object.assign(service, {
    url,
    username,
    password,
    torrentPort,
    downloadDir,
    profileDir: o.profileDir,
  }) as RunningQbittorrent;
}

/** A logged-in session on a qbittorrent-nox of ours (tests, the seeding command, the bench). */
export class QbtSession {
  private cookie = '';
  constructor(
    readonly url: string,
    private readonly username: string,
    private readonly password: string,
  ) {}

  static of(q: Pick<RunningQbittorrent, 'url' | 'username' | 'password'>): QbtSession {
    return new QbtSession(q.url, q.username, q.password);
  }

  async login(): Promise<void> {
    const res = await fetch(`${this.url}/api/v2/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', referer: this.url },
      body: new URLSearchParams({ username: this.username, password: this.password }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok || text.trim() === 'Fails.') throw new Error(`login to ${this.url} refused: ${res.status} ${text}`);
    this.cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
  }

  async call(method: string, route: string, body?: URLSearchParams | FormData): Promise<Response> {
    if (!this.cookie) await this.login();
    const res = await fetch(`${this.url}/api/v2/${route}`, {
      method,
      headers: { cookie: this.cookie, referer: this.url },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    if (!res.ok) throw new Error(`${method} ${route} on ${this.url} answered ${res.status}: ${await res.text()}`);
    return res;
  }

  async torrents(query = ''): Promise<Array<Record<string, unknown>>> {
    return (await (await this.call('GET', `torrents/info${query}`)).json()) as Array<Record<string, unknown>>;
  }

  /**
   * Seeds a .torrent whose content is already at savePath (no hash check: we just made it from that file), and
   * returns once it is seeding: a peer that connects before the seeder has loaded the torrent is turned away, and
   * libtorrent tries that peer again only about a minute later.
   */
  async seed(torrentFile: string, savePath: string, id: string): Promise<void> {
    const form = new FormData();
    form.set('torrents', new Blob([fs.readFileSync(torrentFile)]), path.basename(torrentFile));
    form.set('savepath', savePath);
    form.set('skip_checking', 'true');
    await this.call('POST', 'torrents/add', form);
    const until = Date.now() + 30_000;
    for (;;) {
      const [t] = await this.torrents(`?hashes=${id}`);
      if (t && t.progress === 1 && /UP$|^uploading$/.test(String(t.state))) return;
      if (Date.now() > until) throw new Error(`${torrentFile} is not seeding after 30 s: ${JSON.stringify(t)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async addPeers(hashes: string[], peers: string[]): Promise<void> {
    await this.call(
      'POST',
      'torrents/addPeers',
      new URLSearchParams({ hashes: hashes.join('|'), peers: peers.join('|') }),
    );
  }
}
