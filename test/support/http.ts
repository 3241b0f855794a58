import { httpUrl } from './stack';

export interface Answer {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** `Authorization` for one of the run's tokens (test/support/globalSetup). */
export const bearer = (token = process.env.TEST_TOKEN_ALL) => ({ authorization: `Bearer ${token}` });

/**
 * One HTTP call to the service under serverless offline, JSON in and out,
 * with the all-scopes token unless `headers` sets `authorization` (undefined = none).
 */
export async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string | undefined> = {},
): Promise<Answer> {
  const all: Record<string, string | undefined> = {
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...bearer(),
    ...headers,
  };
  const res = await fetch(httpUrl(path), {
    method,
    headers: Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined)),
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

/** The stack's torrent-client emulator, through its control API (torrents in the service's category unless said otherwise). */
export async function emulatorTorrent(spec: {
  kind: 'v1' | 'v2' | 'hybrid' | 'legacy';
  state?: string;
  name?: string;
  category?: string;
  progress?: number;
}) {
  const res = await fetch(`${process.env.TORRENT_CLIENT_URL}/emulator/torrents`, {
    method: 'POST',
    body: JSON.stringify({ category: 'torrent-scan-sync', ...spec }),
  });
  return (await res.json()) as { hash: string; infohash_v1?: string; infohash_v2?: string; name: string };
}

export async function emulatorTorrents(): Promise<Array<{ hash: string; infohash_v1?: string; infohash_v2?: string }>> {
  return (await (await fetch(`${process.env.TORRENT_CLIENT_URL}/emulator/torrents`)).json()) as Array<{
    hash: string;
    infohash_v1?: string;
    infohash_v2?: string;
  }>;
}

/** Which qBittorrent the stack's emulator plays (4.6, 5.1, 5.2). */
export async function emulatorProfile(profile: string): Promise<void> {
  const res = await fetch(`${process.env.TORRENT_CLIENT_URL}/emulator/profile`, {
    method: 'PUT',
    body: JSON.stringify({ profile }),
  });
  if (res.status !== 200) throw new Error(`emulator refused profile ${profile}: ${await res.text()}`);
}
