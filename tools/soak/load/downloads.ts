import { randomBytes } from 'node:crypto';
import type { Random } from '../args';
import { Answer, call, Deadline, every, HttpDeps } from './http';

/**
 * Downloads through the API as users make them: new infohash sets (v1, v2,
 * both) and the seeder's magnets (which the real client completes),
 * concurrent duplicates, cancels, retries, a few bad requests, and the
 * download's page rendered for a signed-in browser session.
 */

export interface DownloadLoadDeps extends HttpDeps {
  random: Random;
  magnets: string[];
  sleep: (ms: number) => Promise<void>;
}

export interface CreatedDownload {
  id: string;
  status: number;
  at: number;
}

export interface DownloadLoadResult {
  /** Every create the API answered 2xx, with the id it named. */
  created: CreatedDownload[];
  cancelled: string[];
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export async function downloadLoad(
  deps: DownloadLoadDeps,
  until: Deadline,
  everyMs = 3000,
): Promise<DownloadLoadResult> {
  const result: DownloadLoadResult = { created: [], cancelled: [] };
  const magnets = [...deps.magnets];
  let cookie: string | undefined;
  const create = async (body: unknown): Promise<Answer> => {
    const at = deps.now();
    const answer = await call(deps, 'download create', 'POST', '/downloads', { body, timed: 'download create' });
    const id = (answer.body as { id?: string } | undefined)?.id;
    if (answer.status >= 200 && answer.status < 300 && id) result.created.push({ id, status: answer.status, at });
    return answer;
  };
  const someId = () => (result.created.length ? deps.random.pick(result.created).id : undefined);

  await every(everyMs, until, deps.now, deps.sleep, async () => {
    const r = deps.random.next();
    if (magnets.length && r < 0.15) {
      await create({ magnet: magnets.shift() });
    } else if (r < 0.45) {
      const kind = deps.random.pick(['v1', 'v2', 'hybrid'] as const);
      const infohashes = kind === 'v1' ? [hex(20)] : kind === 'v2' ? [hex(32)] : [hex(20), hex(32)];
      await create({ infohashes, name: `soak ${kind} ${infohashes[0].slice(0, 8)}` });
    } else if (r < 0.55) {
      // The same new set three times at once: one download, whatever the interleaving.
      const body = { infohashes: [hex(20)], name: 'soak concurrent duplicate' };
      deps.recorder.count('download concurrent duplicate');
      await Promise.all([create(body), create(body), create(body)]);
    } else if (r < 0.65) {
      const id = someId();
      if (!id) return;
      const answer = await call(deps, 'download cancel', 'POST', `/downloads/${id}/state`, {
        body: { state: 'cancelled' },
      });
      if (answer.status === 200) result.cancelled.push(id);
    } else if (r < 0.72) {
      const id = result.cancelled.length ? deps.random.pick(result.cancelled) : undefined;
      if (id) await call(deps, 'download retry', 'POST', `/downloads/${id}/retry`);
    } else if (r < 0.77) {
      await call(deps, 'download bad request', 'POST', '/downloads', { body: { infohashes: ['not-a-hash'] } });
    } else {
      const id = someId();
      if (!id) return;
      cookie ??= await signIn(deps);
      const page = await call(deps, 'page render', 'GET', `/download/${id}`, { cookie, timed: 'page render' });
      // A session lost (a restarted offline keeps its keys, but be safe): sign in again next time.
      if (page.status === 302 || page.status === 401) cookie = undefined;
    }
  });
  return result;
}

/** A browser session: the token posted to /signin, the session cookie it sets. */
async function signIn(deps: DownloadLoadDeps): Promise<string | undefined> {
  const answer = await call(deps, 'sign in', 'POST', '/signin', { form: { token: deps.token } });
  const cookies = answer.headers?.getSetCookie() ?? [];
  return cookies.length ? cookies.map((c) => c.split(';')[0]).join('; ') : undefined;
}
