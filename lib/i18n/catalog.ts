import type { Lang } from './languages';

/**
 * A surface's messages (the web UI, the console, the bot) are ONE interface M
 * with one catalogue per language, each declared as `M`: a key missing from a
 * language, or one only it has, is a type error. A message is a whole
 * sentence: a string, or a function of its named parameters (plurals inside it
 * by `plural`), never fragments joined by the caller, since word order and
 * agreement differ between languages.
 */
export type Catalogs<M> = { readonly [L in Lang]: M };

/** The catalogue of a language, chosen once per request. */
export function catalogue<M>(catalogs: Catalogs<M>): (lang: Lang) => M {
  return (lang) => catalogs[lang];
}
