import type http from 'node:http';
import { actions, POST_ONLY, Profile, SCOPES, TRAITS } from './profiles';
import { multipartBody } from '../../lib/http/multipart';

/**
 * What qBittorrent checks before an action runs, in its order
 * (WebApplication::processRequest and doProcessRequest, src/webui/webapplication.cpp,
 * releases 4.6.7, 5.1.4 and 5.2.3):
 * 1. the CSRF check (Origin, else Referer, must name Host's host:port; 5.2 skips it for a
 *    request carrying `Authorization: Bearer …`) and the Host check (a port in Host must be
 *    the listening port): 401 for EVERY call, not only login;
 * 2. a path that is not /api/v2/<scope>/<action>: the WebUI's files (404 here; 404 with a key);
 * 3. no session (no valid cookie, a wrong API key) and not auth/login: 403, whatever the path;
 *    with a key, any auth/* is 403 (5.2);
 * 4. a scope the session has not: 404; 5. a wrong method: 405;
 * 6. an action the scope has not: 404, "Endpoint does not exist" on 5.2
 *    (APIController::run, src/webui/api/apicontroller.cpp), "Not Found" before.
 */
export type Verdict =
  | { status: number; text: string }
  | { scope: string; action: string; params: URLSearchParams; session?: string; files?: UploadedFile[] };

/** A multipart part with a filename (RequestParser puts those apart from the form fields). */
export interface UploadedFile {
  filename: string;
  data: Buffer;
}

export interface GateInput {
  profile: Profile;
  port: number;
  /** With a trusted reverse proxy, X-Forwarded-Host stands for Host in the CSRF check. */
  reverseProxy: boolean;
  req: http.IncomingMessage;
  url: URL;
  body: string;
  /** The body's bytes (a multipart upload is binary). */
  raw?: Buffer;
  /** The session this request carries (cookie or API key), if any is valid. */
  session: (bearer: string | undefined) => string | undefined;
}

const PATH = /^\/api\/v2\/([A-Za-z_][A-Za-z_0-9]*)\/([A-Za-z_][A-Za-z_0-9]*)$/;

export function gate({ profile, port, reverseProxy, req, url, body, raw, session }: GateInput): Verdict {
  const modern = TRAITS[profile].modern;
  const bearer = /^bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
  const usingKey = modern && bearer !== undefined;
  const host = header(req, 'host') ?? '';
  const target = (reverseProxy && header(req, 'x-forwarded-host')) || host;
  if ((!usingKey && crossSite(req, target)) || !hostValid(host, port)) return { status: 401, text: 'Unauthorized' };
  const match = PATH.exec(url.pathname);
  if (!match) return { status: 404, text: 'Not Found' };
  const [, scope, action] = match;
  const sid = session(usingKey ? bearer : undefined);
  if (!sid && `${scope}/${action}` !== 'auth/login') return { status: 403, text: 'Forbidden' };
  if (scope === 'auth' && usingKey) return { status: 403, text: 'Forbidden' };
  if (scope !== 'auth' && !SCOPES[profile].includes(scope)) return { status: 404, text: 'Not Found' };
  const method = req.method ?? 'GET';
  if (POST_ONLY.has(`${scope}/${action}`) ? method !== 'POST' : method !== 'GET' && method !== 'POST')
    return { status: 405, text: 'Method Not Allowed' };
  if (!actions(profile)[scope]?.includes(action))
    return { status: 404, text: modern ? 'Endpoint does not exist' : 'Not Found' };
  // A GET's parameters are its query; a POST's, its body alone (processRequest): urlencoded, or multipart with
  // its fields as parameters and its files apart.
  if (method !== 'GET' && /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '')) {
    const parts = multipartBody(
      {
        body: (raw ?? Buffer.from(body)).toString('base64'),
        isBase64Encoded: true,
        headers: req.headers as Record<string, string>,
      },
      Number.MAX_SAFE_INTEGER,
    );
    const params = new URLSearchParams();
    const files: UploadedFile[] = [];
    for (const p of parts) {
      if (p.filename !== undefined) files.push({ filename: p.filename, data: p.data });
      else params.append(p.name, p.data.toString('utf8'));
    }
    return { scope, action, params, session: sid, files };
  }
  const params = method === 'GET' ? url.searchParams : new URLSearchParams(body);
  return { scope, action, params, session: sid };
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** WebApplication::isCrossSiteRequest: Origin first, else Referer; neither is allowed (API users). */
function crossSite(req: http.IncomingMessage, target: string): boolean {
  const claimed = header(req, 'origin') ?? header(req, 'referer');
  if (claimed === undefined) return false;
  const a = hostPort(target.includes('://') ? target : `http://${target}`);
  const b = hostPort(claimed);
  return !a || !b || a !== b;
}

/** WebApplication::validateHostHeader with the default domain list `*`: only a port other than ours fails. */
function hostValid(host: string, port: number): boolean {
  const m = /:(\d+)$/.exec(host.replace(/^\[[^\]]*\]/, ''));
  return !m || Number(m[1]) === port;
}

function hostPort(url: string): string | undefined {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port}`; // QUrl::port(): none named is -1 on both sides
  } catch {
    return undefined;
  }
}
