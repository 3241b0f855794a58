/**
 * The languages we ship and how a request chooses one: a fixed setting wins;
 * otherwise the person's own choice (a cookie or `?lang=` the page set);
 * otherwise the first of the browser's Accept-Language we ship; else English.
 */

export const LANGUAGES = ['ru', 'en'] as const;
export type Lang = (typeof LANGUAGES)[number];
export const DEFAULT_LANG: Lang = 'en';

export function isLang(value: unknown): value is Lang {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

/**
 * The BCP 47 locale each language formats with. English is en-GB: day before
 * month and a 24-hour clock, so a time never needs AM/PM beside hour labels.
 */
export const LOCALES: Readonly<Record<Lang, string>> = { ru: 'ru-RU', en: 'en-GB' };

/** Accept-Language is outside data: bounded, and read only for tags we ship. */
const MAX_ACCEPT = 512;
const RANGE = /^([A-Za-z]{1,8})(?:-[A-Za-z0-9]{1,8})*$/;

/** The browser's preferred language among ours (RFC 9110 §12.5.4 weights; `*` and q=0 never choose). */
export function fromAcceptLanguage(header: string | undefined): Lang | undefined {
  if (!header || header.length > MAX_ACCEPT) return undefined;
  let best: { lang: Lang; q: number } | undefined;
  header.split(',').forEach((part) => {
    const [range, ...params] = part.trim().split(';');
    const tag = RANGE.exec(range.trim())?.[1]?.toLowerCase();
    const qParam = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/i.exec(p)).find(Boolean);
    const q = qParam ? Number(qParam[1]) : params.length ? 0 : 1;
    if (!isLang(tag) || !(q > 0) || q > 1) return;
    if (!best || q > best.q) best = { lang: tag, q };
  });
  return best?.lang;
}

export interface LanguageChoice {
  /** The deployment's fixed language (a setting), if any. */
  fixed?: Lang;
  /** The person's choice on the page (cookie or query), if any. */
  chosen?: string;
  acceptLanguage?: string;
}

export function negotiate(choice: LanguageChoice): Lang {
  if (choice.fixed) return choice.fixed;
  if (isLang(choice.chosen)) return choice.chosen;
  return fromAcceptLanguage(choice.acceptLanguage) ?? DEFAULT_LANG;
}
