import { DEFAULT_LANG, isLang, type Lang } from '../i18n';

/**
 * The language a chat is spoken to in: its own choice (/lang), else the
 * deployment's fixed language (UI_LANGUAGE), else, when a person wrote, their
 * Telegram app's language among those we ship, else English. Notifications
 * have no person: choice, setting, English.
 */
export function chatLanguage(o: { chosen?: Lang; fixed?: Lang; languageCode?: string }): Lang {
  return o.chosen ?? o.fixed ?? fromTelegramCode(o.languageCode) ?? DEFAULT_LANG;
}

/** Telegram's `language_code` is an IETF tag from the person's app ("ru", "en-US"); outside data, read bounded. */
export function fromTelegramCode(code: string | undefined): Lang | undefined {
  if (typeof code !== 'string' || code.length > 35) return undefined;
  const primary = /^([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]{1,8})*$/.exec(code)?.[1]?.toLowerCase();
  return isLang(primary) ? primary : undefined;
}

/** The argument of `/lang`: a language we ship, by its code, any case; anything else is no choice. */
export function parseLangArgument(text: string): Lang | undefined {
  const arg = text.trim().toLowerCase();
  return isLang(arg) ? arg : undefined;
}
