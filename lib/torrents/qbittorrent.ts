import { TorrentClient, TorrentClientError, TorrentInfo } from './client';

/**
 * qBittorrent Web API v2 client: cookie session from /api/v2/auth/login,
 * renewed once when the server forgets it (403). Every call is bounded.
 */

export interface QBittorrentOptions {
  baseUrl: string;
  username: string;
  password: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export class QBittorrentClient implements TorrentClient {
  private session?: Promise<string>;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: QBittorrentOptions) {
    this.fetch = options.fetch ?? fetch;
  }

  async list(): Promise<TorrentInfo[]> {
    const res = await this.call('GET', '/api/v2/torrents/info');
    const body = (await res.json()) as unknown;
    if (!Array.isArray(body)) throw new TorrentClientError('torrents/info did not answer a list');
    return body as TorrentInfo[];
  }

  async add(magnet: string): Promise<void> {
    const res = await this.call('POST', '/api/v2/torrents/add', new URLSearchParams({ urls: magnet }));
    const text = (await res.text()).trim();
    if (text !== 'Ok.') throw new TorrentClientError(`torrents/add refused the magnet: ${text.slice(0, 200) || res.status}`, res.status);
  }

  async remove(hashes: string[]): Promise<void> {
    await this.call('POST', '/api/v2/torrents/delete', new URLSearchParams({ hashes: hashes.join('|'), deleteFiles: 'false' }));
  }

  private async call(method: string, path: string, form?: URLSearchParams, renewed = false): Promise<Response> {
    const sid = await this.login();
    const res = await this.request(method, path, form, { cookie: `SID=${sid}` });
    if (res.status === 403 && !renewed) {
      this.session = undefined;
      return this.call(method, path, form, true);
    }
    if (!res.ok) throw new TorrentClientError(`${method} ${path} answered ${res.status}`, res.status);
    return res;
  }

  private login(): Promise<string> {
    this.session ??= (async () => {
      const form = new URLSearchParams({ username: this.options.username, password: this.options.password });
      const res = await this.request('POST', '/api/v2/auth/login', form, {});
      const sid = /SID=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
      if (!res.ok || !sid) throw new TorrentClientError(`login refused (${res.status})`, res.status);
      return sid;
    })();
    this.session.catch(() => (this.session = undefined));
    return this.session;
  }

  private async request(method: string, path: string, form: URLSearchParams | undefined, headers: Record<string, string>) {
    try {
      return await this.fetch(new URL(path, this.options.baseUrl), {
        method,
        headers: { ...headers, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), referer: this.options.baseUrl },
        body: form?.toString(),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000),
      });
    } catch (err) {
      throw new TorrentClientError(`${method} ${path} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
