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

/** A state as this profile names it: 5.x says stopped* where 4.x says paused*. */
export function stateName(profile: Profile, state: string): string {
  if (TRAITS[profile].stopped) return state.replace(/^paused(UP|DL)$/, 'stopped$1');
  return state.replace(/^stopped(UP|DL)$/, 'paused$1');
}
