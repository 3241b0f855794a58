import { httpUrl } from './stack';

export interface Answer {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** One HTTP call to the service under serverless offline, JSON in and out. */
export async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(httpUrl(path), {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** The stack's torrent-client emulator, through its control API. */
export async function emulatorTorrent(spec: { kind: 'v1' | 'v2' | 'hybrid' | 'legacy'; state?: string; name?: string }) {
  const res = await fetch(`${process.env.TORRENT_CLIENT_URL}/emulator/torrents`, { method: 'POST', body: JSON.stringify(spec) });
  return (await res.json()) as { hash: string; infohash_v1?: string; infohash_v2?: string; name: string };
}

export async function emulatorTorrents(): Promise<Array<{ hash: string; infohash_v1?: string; infohash_v2?: string }>> {
  return (await (await fetch(`${process.env.TORRENT_CLIENT_URL}/emulator/torrents`)).json()) as Array<{ hash: string; infohash_v1?: string; infohash_v2?: string }>;
}
