/** Languages, time zones and message catalogues for every surface that speaks to people (docs/configuration.md). */
export { LANGUAGES, DEFAULT_LANG, LOCALES, isLang, fromAcceptLanguage, negotiate } from './languages';
export type { Lang, LanguageChoice } from './languages';
export { createFormat, exactNumber, formatBytes, formatSeconds, formatSpeed, hourStart, plural } from './format';
export type { Format, PluralForms } from './format';
export { catalogue } from './catalog';
export type { Catalogs } from './catalog';
export { isTimeZone, loadLocaleSettings } from './config';
export type { LocaleSettings } from './config';
