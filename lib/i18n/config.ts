import { EnvReader, type Env } from '../config/env';
import { isLang, LANGUAGES, type Lang } from './languages';

/**
 * The people-facing settings: `UI_LANGUAGE` fixes the language of every page
 * (and of the bot's chats without their own choice); unset, each request
 * negotiates. `UI_TIME_ZONE` is the IANA zone every time is shown in,
 * UTC by default (e.g. `Europe/Moscow`).
 */
export interface LocaleSettings {
  language?: Lang;
  timeZone: string;
}

export function isTimeZone(zone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function loadLocaleSettings(env: Env = process.env): LocaleSettings {
  const reader = new EnvReader(env);
  const language = reader.has('UI_LANGUAGE') ? reader.string('UI_LANGUAGE') : undefined;
  if (language !== undefined && !isLang(language))
    reader.refuse('UI_LANGUAGE', `must be one of ${LANGUAGES.join(', ')} (or unset), got ${JSON.stringify(language)}`);
  const timeZone = reader.string('UI_TIME_ZONE', { default: 'UTC' });
  if (!isTimeZone(timeZone))
    reader.refuse('UI_TIME_ZONE', `must be an IANA time zone such as Europe/Moscow, got ${JSON.stringify(timeZone)}`);
  reader.done();
  return { language: isLang(language) ? language : undefined, timeZone };
}
