/** The emulator's profiles: one per behaviour family users run. */

export type Profile = '4.6' | '5.1' | '5.2';
export const PROFILES: readonly Profile[] = ['4.6', '5.1', '5.2'];

export interface ProfileTraits {
  webapi: string;
  version: string;
  /** 5.2: 204/401 login, cookie QBT_SID_<port>, JSON add answers (202/409), API keys. */
  modern: boolean;
  /** 5.x renamed paused* to stopped*. */
  stopped: boolean;
}

export const TRAITS: Record<Profile, ProfileTraits> = {
  '4.6': { webapi: '2.9.3', version: 'v4.6.7', modern: false, stopped: false },
  '5.1': { webapi: '2.11.4', version: 'v5.1.2', modern: false, stopped: true },
  '5.2': { webapi: '2.15.1', version: 'v5.2.0', modern: true, stopped: true },
};

/**
 * Fields the emulator keeps that this profile's torrents/info and maindata do not have
 * (src/webui/api/serialize/serialize_torrent.h: `has_metadata` arrived in 5.0.0).
 */
const ABSENT: Record<Profile, readonly string[]> = { '4.6': ['has_metadata'], '5.1': [], '5.2': [] };

/** A torrent's fields as this profile serialises them. */
export function serialised<T extends Record<string, unknown>>(profile: Profile, fields: T): Partial<T> {
  const absent = ABSENT[profile];
  return absent.length
    ? (Object.fromEntries(Object.entries(fields).filter(([k]) => !absent.includes(k))) as Partial<T>)
    : fields;
}

/** A state as this profile names it: 5.x says stopped* where 4.x says paused*. */
export function stateName(profile: Profile, state: string): string {
  if (TRAITS[profile].stopped) return state.replace(/^paused(UP|DL)$/, 'stopped$1');
  return state.replace(/^stopped(UP|DL)$/, 'paused$1');
}

/** The scopes a session has (WebApplication::sessionStartImpl, src/webui/webapplication.cpp of each release). */
export const SCOPES: Record<Profile, readonly string[]> = {
  '4.6': ['app', 'log', 'rss', 'search', 'torrents', 'transfer', 'sync'],
  '5.1': ['app', 'log', 'torrentcreator', 'rss', 'search', 'torrents', 'transfer', 'sync'],
  '5.2': ['app', 'clientdata', 'log', 'torrentcreator', 'rss', 'search', 'torrents', 'transfer', 'sync'],
};

/**
 * The actions this emulator answers, per scope; any other action of a known
 * scope is "not found" (a real client answers more: the client uses these).
 * 5.0 renamed torrents/pause|resume to stop|start (torrentscontroller.h).
 */
export function actions(profile: Profile): Record<string, readonly string[]> {
  return {
    auth: ['login'],
    app: ['webapiVersion', 'version'],
    torrents: [
      'info',
      'add',
      'delete',
      'setShareLimits',
      'categories',
      'createCategory',
      ...(TRAITS[profile].stopped ? ['stop', 'start'] : ['pause', 'resume']),
    ],
    sync: ['maindata'],
  };
}

/**
 * Actions that answer only POST (WebApplication::m_allowedMethod, src/webui/webapplication.h); every other
 * action answers GET and POST, and any other method is 405.
 */
export const POST_ONLY = new Set([
  'auth/login',
  'auth/logout',
  'torrents/add',
  'torrents/createCategory',
  'torrents/delete',
  'torrents/setShareLimits',
  'torrents/pause',
  'torrents/resume',
  'torrents/stop',
  'torrents/start',
]);
