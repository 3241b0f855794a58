import { randomBytes } from 'node:crypto';
import { Profile, PROFILES, QbittorrentEmulator } from '../../../emulator/qbittorrent/emulator';
import { QBittorrentClient } from '../../../lib/torrents/qbittorrent';

/**
 * Conformance of the qBittorrent emulator's answers, and of our client's
 * requests, to tables taken from qBittorrent's own WebUI sources (repository
 * qbittorrent/qBittorrent, tags release-4.6.7, release-5.1.4, release-5.2.3):
 * - torrents/info fields: src/webui/api/serialize/serialize_torrent.h (names)
 *   and serialize_torrent.cpp `serialize` (types), `torrentStateToString` (states);
 * - sync/maindata keys: src/webui/api/synccontroller.cpp (KEY_*, generateMaindataSyncData);
 * - torrents/add answer and parameters: src/webui/api/torrentscontroller.cpp `addAction`;
 * - actions per release: src/webui/api/*controller.h; POST-only: webapplication.h m_allowedMethod;
 * - status texts: src/base/http/httperror.cpp; API_VERSION: src/webui/webapplication.h.
 * Any drift (a field renamed, a type changed, a parameter the release does not read) fails here.
 */

type Kind = 's' | 'n' | 'b' | 'b?';
/** serialize() of 5.2.3: name → JSON type (`private` is null until the metadata is known). */
const FIELDS_523: Record<string, Kind> = {
  ...Object.fromEntries(
    'hash infohash_v1 infohash_v2 name created_by magnet_uri state category tags save_path download_path content_path root_path tracker share_limit_action comment'
      .split(' ')
      .map((k) => [k, 's']),
  ),
  ...Object.fromEntries(
    'creation_date total_size pieces_num piece_size size progress total_wasted pieces_have dlspeed upspeed priority num_seeds num_complete num_leechs num_incomplete eta added_on completion_on trackers_count dl_limit up_limit downloaded uploaded downloaded_session uploaded_session amount_left completed connections_count connections_limit max_ratio max_seeding_time max_inactive_seeding_time ratio ratio_limit popularity seeding_time_limit inactive_seeding_time_limit seen_complete time_active seeding_time last_activity availability reannounce'
      .split(' ')
      .map((k) => [k, 'n']),
  ),
  ...Object.fromEntries(
    'has_metadata seq_dl f_l_piece_prio super_seeding force_start auto_tmm'.split(' ').map((k) => [k, 'b']),
  ),
  private: 'b?',
};
/** serialize_torrent.h of each release: the names it has. */
const NAMES: Record<Profile, string[]> = {
  '4.6':
    'hash infohash_v1 infohash_v2 name magnet_uri size progress dlspeed upspeed priority num_seeds num_complete num_leechs num_incomplete ratio eta state seq_dl f_l_piece_prio category tags super_seeding force_start save_path download_path content_path added_on completion_on tracker trackers_count dl_limit up_limit downloaded uploaded downloaded_session uploaded_session amount_left completed max_ratio max_seeding_time max_inactive_seeding_time ratio_limit seeding_time_limit inactive_seeding_time_limit seen_complete last_activity total_size auto_tmm time_active seeding_time availability'.split(
      ' ',
    ),
  '5.1':
    'hash infohash_v1 infohash_v2 name magnet_uri size progress dlspeed upspeed priority num_seeds num_complete num_leechs num_incomplete ratio popularity eta state seq_dl f_l_piece_prio category tags super_seeding force_start save_path download_path content_path root_path added_on completion_on tracker trackers_count dl_limit up_limit downloaded uploaded downloaded_session uploaded_session amount_left completed max_ratio max_seeding_time max_inactive_seeding_time ratio_limit seeding_time_limit inactive_seeding_time_limit seen_complete last_activity total_size auto_tmm time_active seeding_time availability reannounce comment private has_metadata'.split(
      ' ',
    ),
  '5.2': Object.keys(FIELDS_523),
};
/** torrentStateToString: 4.x says paused*, 5.x stopped*. */
const COMMON_STATES =
  'error missingFiles uploading queuedUP stalledUP checkingUP forcedUP downloading metaDL forcedMetaDL queuedDL stalledDL checkingDL forcedDL checkingResumeData moving unknown'.split(
    ' ',
  );
const STATES: Record<Profile, string[]> = {
  '4.6': [...COMMON_STATES, 'pausedUP', 'pausedDL'],
  '5.1': [...COMMON_STATES, 'stoppedUP', 'stoppedDL'],
  '5.2': [...COMMON_STATES, 'stoppedUP', 'stoppedDL'],
};
/** generateMaindataSyncData's top-level keys. */
const MAINDATA_KEYS = new Set(
  'rid full_update torrents torrents_removed categories categories_removed tags tags_removed trackers trackers_removed server_state'.split(
    ' ',
  ),
);
/** getTransferInfo's keys and maindata's own (KEY_TRANSFER_*, KEY_SYNC_MAINDATA_*), all releases' union. */
const SERVER_STATE_KEYS = new Set(
  'connection_status dht_nodes dl_info_data dl_info_speed dl_rate_limit up_info_data up_info_speed up_rate_limit free_space_on_disk queueing use_alt_speed_limits refresh_interval last_external_address_v4 last_external_address_v6 alltime_dl alltime_ul average_time_queue global_ratio queued_io_jobs read_cache_hits read_cache_overload total_buffers_size total_peer_connections total_queued_size total_wasted_session write_cache_overload'.split(
    ' ',
  ),
);
/** addAction 5.2.3's answer. */
const ADD_ANSWER: Record<string, 'n' | 'string[]'> = {
  added_torrent_ids: 'string[]',
  failure_count: 'n',
  pending_count: 'n',
  success_count: 'n',
};
/** The parameters each action reads, per release (the client may send only these). */
const ADD_PARAMS_COMMON =
  'urls addToTopOfQueue autoTMM category contentLayout dlLimit downloadPath firstLastPiecePrio inactiveSeedingTimeLimit ratioLimit rename savepath seedingTimeLimit sequentialDownload skip_checking stopCondition tags upLimit useDownloadPath';
function paramsOf(p: Profile): Record<string, string[]> {
  return {
    'auth/login': ['username', 'password'],
    'app/webapiVersion': [],
    'app/version': [],
    'torrents/info': 'filter category tag sort reverse limit offset hashes'.split(' '),
    'torrents/add': `${ADD_PARAMS_COMMON} ${p === '4.6' ? 'cookie paused' : 'forced stopped shareLimitAction'}`.split(
      ' ',
    ),
    'torrents/delete': ['hashes', 'deleteFiles'],
    // categoriesAction reads nothing; createCategoryAction: category, savePath, downloadPathEnabled, downloadPath.
    'torrents/categories': [],
    'torrents/createCategory': ['category', 'savePath', 'downloadPathEnabled', 'downloadPath'],
    [p === '4.6' ? 'torrents/pause' : 'torrents/stop']: ['hashes'],
    'sync/maindata': ['rid'],
  };
}
const PARAMS: Record<Profile, Record<string, string[]>> = {
  '4.6': paramsOf('4.6'),
  '5.1': paramsOf('5.1'),
  '5.2': paramsOf('5.2'),
};
const POST_ONLY = new Set([
  'auth/login',
  'torrents/add',
  'torrents/createCategory',
  'torrents/delete',
  'torrents/pause',
  'torrents/stop',
]);
const API_VERSION: Record<Profile, string> = { '4.6': '2.9.3', '5.1': '2.11.4', '5.2': '2.15.1' };

const kindOf = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'array'
      : typeof v === 'string'
        ? 's'
        : typeof v === 'number'
          ? 'n'
          : typeof v === 'boolean'
            ? 'b'
            : typeof v;

let checks = 0;
let totalMismatches = 0;
let mismatches: string[] = [];
function check(ok: boolean, what: string) {
  checks++;
  if (!ok) mismatches.push(what);
}

function checkTorrentFields(profile: Profile, where: string, fields: Record<string, unknown>) {
  for (const [k, v] of Object.entries(fields)) {
    check(NAMES[profile].includes(k), `${profile} ${where}: field ${k} is not in serialize_torrent.h`);
    const want = FIELDS_523[k];
    const got = kindOf(v);
    check(
      want === undefined || got === want || (want === 'b?' && (got === 'b' || got === 'null')),
      `${profile} ${where}: ${k} is ${got}, officially ${want}`,
    );
    if (k === 'state')
      check(
        STATES[profile].includes(v as string),
        `${profile} ${where}: state ${String(v)} is not one qBittorrent names`,
      );
  }
}

const hex = (n: number) => randomBytes(n).toString('hex');

describe.each<Profile>([...PROFILES])(
  'qBittorrent %s: the emulator and the client against the official tables',
  (profile) => {
    let emulator: QbittorrentEmulator;
    afterEach(() => emulator.close());

    it('answers and requests hold to the tables', async () => {
      mismatches = [];
      emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile });
      const url = await emulator.listen();
      const requests: Array<{ method: string; path: string; params: string[] }> = [];
      const answers: Array<{ path: string; status: number; body: string }> = [];
      const recording: typeof fetch = async (input, init) => {
        const u = new URL(String(input));
        const params = init?.method === 'POST' ? new URLSearchParams(String(init.body ?? '')) : u.searchParams;
        requests.push({ method: init?.method ?? 'GET', path: u.pathname, params: [...params.keys()] });
        const res = await fetch(input, init);
        answers.push({ path: u.pathname, status: res.status, body: await res.clone().text() });
        return res;
      };
      const client = new QBittorrentClient({
        baseUrl: url,
        auth: { kind: 'password', username: 'admin', password: 'pw' },
        allCategories: true,
        fetch: recording,
      });
      for (const kind of ['v1', 'v2', 'hybrid'] as const)
        for (const state of [
          'downloading',
          'stalledDL',
          'uploading',
          'pausedUP',
          'stoppedDL',
          'checkingResumeData',
          'error',
          'missingFiles',
        ])
          emulator.addTorrent({ kind, state, progress: state === 'uploading' ? 1 : 0.5, category: 'c', tags: 'a, b' });
      emulator.addTorrent({ kind: 'hybrid', metadata: false });
      const first = await client.snapshot();
      emulator.update([...emulator.torrents.keys()][0], { progress: 0.75, state: 'stalledDL' });
      emulator.remove([...emulator.torrents.keys()][1]);
      await client.snapshot();
      const magnet = `magnet:?xt=urn:btih:${hex(20)}&dn=x`;
      await client.add(magnet, { tags: ['t1'] });
      await client.add(magnet); // a duplicate: Fails. / 409, then looked up
      await client.createCategory('torrent-scan-sync/movies', 'Movies');
      await client.createCategory('torrent-scan-sync/movies', 'Movies'); // exists: 409 Unable to create category
      await client.add(`magnet:?xt=urn:btih:${hex(20)}&dn=y`, { category: 'torrent-scan-sync/movies' });
      await client.categories();
      await client.stop([first.present[2].hash]);
      await client.remove([first.present[3].hash]);
      const info = await fetch(`${url}/api/v2/torrents/info`, {
        headers: { cookie: requests.length ? await cookieOf(url) : '' },
      });
      answers.push({ path: '/api/v2/torrents/info', status: info.status, body: await info.text() });

      // Requests: an action of this release, its method, only the parameters it reads.
      for (const r of requests) {
        const action = r.path.replace('/api/v2/', '');
        const known = PARAMS[profile][action];
        check(known !== undefined, `${profile} client: ${action} is not an action of this release`);
        check(!POST_ONLY.has(action) || r.method === 'POST', `${profile} client: ${action} must be POST`);
        for (const p of r.params) check(known?.includes(p) ?? false, `${profile} client: ${action} does not read ${p}`);
      }
      // Answers.
      for (const a of answers) {
        const action = a.path.replace('/api/v2/', '');
        if (action === 'app/webapiVersion')
          check(a.body === API_VERSION[profile], `${profile} webapiVersion ${a.body}`);
        if (action === 'torrents/info' && a.status === 200)
          for (const t of JSON.parse(a.body) as Array<Record<string, unknown>>)
            checkTorrentFields(profile, 'torrents/info', t);
        if (action === 'sync/maindata') {
          const body = JSON.parse(a.body) as Record<string, unknown>;
          for (const k of Object.keys(body)) check(MAINDATA_KEYS.has(k), `${profile} maindata: key ${k}`);
          check(typeof body.rid === 'number', `${profile} maindata: rid`);
          check(
            body.full_update === undefined || body.full_update === true,
            `${profile} maindata: full_update only when true`,
          );
          for (const [id, t] of Object.entries((body.torrents ?? {}) as Record<string, Record<string, unknown>>)) {
            check(/^[0-9a-f]{40}$/.test(id), `${profile} maindata: key ${id} is not a torrent id`);
            check(!('hash' in t), `${profile} maindata: an entry carries hash`);
            checkTorrentFields(profile, 'maindata', t);
          }
          for (const id of (body.torrents_removed ?? []) as unknown[])
            check(typeof id === 'string', `${profile} maindata: torrents_removed`);
          for (const k of Object.keys((body.server_state ?? {}) as object))
            check(SERVER_STATE_KEYS.has(k), `${profile} server_state: ${k}`);
        }
        if (action === 'torrents/categories') {
          // {name: {name, savePath, download_path?}}: categoryOptions.toJSON with save_path renamed, plus name.
          for (const [name, c] of Object.entries(JSON.parse(a.body) as Record<string, Record<string, unknown>>)) {
            check(c.name === name, `${profile} categories: ${name} carries its name`);
            check(typeof c.savePath === 'string', `${profile} categories: savePath`);
            for (const k of Object.keys(c))
              check(['name', 'savePath', 'download_path'].includes(k), `${profile} categories: key ${k}`);
          }
        }
        if (action === 'torrents/createCategory')
          check(
            (a.status === 200 && a.body === '') || (a.status === 409 && a.body === 'Unable to create category'),
            `${profile} createCategory: ${a.status} ${a.body}`,
          );
        if (action === 'torrents/add') {
          if (profile !== '5.2')
            check(['Ok.', 'Fails.'].includes(a.body) && a.status === 200, `${profile} add: ${a.status} ${a.body}`);
          else if (a.status === 409) check(a.body === 'Conflict', `${profile} add 409: ${a.body}`);
          else {
            const body = JSON.parse(a.body) as Record<string, unknown>;
            check(
              Object.keys(body).sort().join() === Object.keys(ADD_ANSWER).join(),
              `${profile} add: keys ${Object.keys(body).join()}`,
            );
            for (const [k, t] of Object.entries(ADD_ANSWER))
              check(
                t === 'n'
                  ? typeof body[k] === 'number'
                  : Array.isArray(body[k]) && (body[k] as unknown[]).every((x) => typeof x === 'string'),
                `${profile} add: ${k}`,
              );
            check(a.status === ((body.pending_count as number) > 0 ? 202 : 200), `${profile} add: status ${a.status}`);
          }
        }
      }
      totalMismatches += mismatches.length;
      expect(mismatches).toEqual([]);
    });

    async function cookieOf(url: string): Promise<string> {
      const res = await fetch(`${url}/api/v2/auth/login`, {
        method: 'POST',
        body: new URLSearchParams({ username: 'admin', password: 'pw' }),
      });
      return res.headers.getSetCookie()[0].split(';')[0];
    }
  },
);

afterAll(() => {
  if (process.env.CONFORMANCE_FIGURES)
    process.stdout.write(`qBittorrent conformance: ${checks} checks, ${totalMismatches} mismatches\n`);
});
