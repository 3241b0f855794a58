import type http from 'node:http';

export interface Upstream {
  url: string;
  username: string;
  password: string;
}

/**
 * Passes a call through to a real qBittorrent, logging in there with its own
 * credentials (ours stand for them). Answers whether the upstream answered.
 */
export async function passThrough(
  upstream: Upstream,
  ours: { username: string; password: string },
  req: http.IncomingMessage,
  url: URL,
  body: string,
  res: http.ServerResponse,
  /** The body's bytes: passed on as they came (a multipart .torrent is binary). */
  raw?: Buffer,
): Promise<boolean> {
  let payload: string | Uint8Array<ArrayBuffer> = raw ? new Uint8Array(raw) : body;
  if (url.pathname === '/api/v2/auth/login') {
    const form = new URLSearchParams(body);
    // Our credentials stand for the upstream's; anything else is passed on as it came (and refused there).
    if (form.get('username') === ours.username && form.get('password') === ours.password)
      payload = new URLSearchParams({ username: upstream.username, password: upstream.password }).toString();
  }
  const headers: Record<string, string> = {};
  for (const name of ['cookie', 'content-type', 'authorization'])
    if (typeof req.headers[name] === 'string') headers[name] = req.headers[name] as string;
  // The upstream's CSRF check compares Referer with its own host: name it.
  headers.referer = upstream.url;
  let answer: Response;
  let text: string;
  try {
    answer = await fetch(`${upstream.url}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : payload,
      signal: AbortSignal.timeout(30_000),
    });
    text = await answer.text();
  } catch (err) {
    // The upstream is down (restarting) or broke off: a gateway's answer, as a reverse proxy in front of it gives.
    const cause = (err as { cause?: unknown }).cause;
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`upstream ${upstream.url}: ${String(err)}${cause ? ` (${String(cause)})` : ''}`);
    return false;
  }
  const out: Record<string, string | string[]> = {
    'content-type': answer.headers.get('content-type') ?? 'text/plain',
  };
  const cookies = answer.headers.getSetCookie();
  if (cookies.length) out['set-cookie'] = cookies;
  res.writeHead(answer.status, out);
  res.end(text);
  return true;
}
