import { LOCALES, type Lang } from './languages';

/**
 * Dates, times, numbers and plurals in one language and one time zone, by
 * `Intl` on the server: a page reads the same in every browser, whatever the
 * browser's own zone or language. Formatters are cached: building an
 * `Intl.DateTimeFormat` costs far more than using one.
 */

const cache = new Map<string, Intl.DateTimeFormat>();
function dtf(locale: string, timeZone: string, opts: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale}|${timeZone}|${JSON.stringify(opts)}`;
  let f = cache.get(key);
  if (!f) cache.set(key, (f = new Intl.DateTimeFormat(locale, { ...opts, timeZone })));
  return f;
}

const DATE_TIME: Intl.DateTimeFormatOptions = {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
};
const DAY_HOUR: Intl.DateTimeFormatOptions = {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
};
const HOUR: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' };

/** Plural forms of one whole message; `{n}` stands for the number, formatted in the language. */
export type PluralForms = { other: string } & Partial<Record<Exclude<Intl.LDMLPluralRule, 'other'>, string>>;

const rules = new Map<Lang, Intl.PluralRules>();
/** The form `Intl.PluralRules` selects for n (Russian: 1 задание, 2 задания, 5 заданий). */
export function plural(lang: Lang, n: number, forms: PluralForms): string {
  let r = rules.get(lang);
  if (!r) rules.set(lang, (r = new Intl.PluralRules(LOCALES[lang])));
  const form = forms[r.select(n)] ?? forms.other;
  return form.replace(/\{n\}/g, new Intl.NumberFormat(LOCALES[lang]).format(n));
}

export interface Format {
  readonly lang: Lang;
  readonly locale: string;
  readonly timeZone: string;
  /** A moment in full: "6 Dec 2026, 04:55:03" / "6 дек. 2026 г., 04:55:03". */
  dateTime(at: number | string): string;
  /** Day and hour:minute, for hour cells: "6 Dec, 04:00". */
  dayHour(at: number): string;
  /** Hour:minute in the zone, for chart axes: "04:00". */
  hour(at: number): string;
  /** The zone as a page names it: "Europe/Moscow (GMT+3)", "UTC". */
  zone(at?: number): string;
  number(n: number): string;
  plural(n: number, forms: PluralForms): string;
  /** A size in binary units, as qBittorrent shows it: "4.2 GiB" / "4,2 ГиБ". */
  bytes(n: number): string;
  /** A transfer speed: "1.5 MiB/s" / "1,5 МиБ/с". */
  speed(bytesPerSecond: number): string;
  /** A span of seconds in its two largest units: "2 h 5 min" / "2 ч 5 мин". */
  seconds(s: number): string;
}

export function createFormat(lang: Lang, timeZone = 'UTC'): Format {
  const locale = LOCALES[lang];
  const ms = (at: number | string) => (typeof at === 'number' ? at : Date.parse(at));
  const safe = (at: number | string, f: (t: number) => string) => {
    const t = ms(at);
    return Number.isFinite(t) ? f(t) : String(at);
  };
  return {
    lang,
    locale,
    timeZone,
    dateTime: (at) => safe(at, (t) => dtf(locale, timeZone, DATE_TIME).format(t)),
    dayHour: (at) => safe(at, (t) => dtf(locale, timeZone, DAY_HOUR).format(t)),
    hour: (at) => safe(at, (t) => dtf(locale, timeZone, HOUR).format(t)),
    zone: (at = Date.now()) => {
      if (timeZone === 'UTC') return 'UTC';
      const offset = dtf('en', timeZone, { timeZoneName: 'shortOffset' })
        .formatToParts(at)
        .find((p) => p.type === 'timeZoneName')?.value;
      return offset ? `${timeZone} (${offset})` : timeZone;
    },
    number: (n) => new Intl.NumberFormat(locale).format(n),
    plural: (n, forms) => plural(lang, n, forms),
    bytes: (n) => formatBytes(lang, n),
    speed: (n) => formatSpeed(lang, n),
    seconds: (n) => formatSeconds(lang, n),
  };
}

/** qBittorrent's own unit names (its Russian translation says КиБ, МиБ, ГиБ). */
const BYTE_UNITS: Record<Lang, readonly string[]> = {
  en: ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'],
  ru: ['Б', 'КиБ', 'МиБ', 'ГиБ', 'ТиБ', 'ПиБ'],
};

export function formatBytes(lang: Lang, n: number): string {
  if (!Number.isFinite(n) || n < 0) return '—';
  const units = BYTE_UNITS[lang];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  const digits = i === 0 || v >= 100 ? 0 : 1;
  const text = new Intl.NumberFormat(LOCALES[lang], { maximumFractionDigits: digits }).format(v);
  return `${text}\u00a0${units[i]}`;
}

const PER_SECOND: Record<Lang, string> = { en: '/s', ru: '/с' };

export function formatSpeed(lang: Lang, bytesPerSecond: number): string {
  const b = formatBytes(lang, bytesPerSecond);
  return b === '—' ? b : `${b}${PER_SECOND[lang]}`;
}

/** Day, hour, minute, second, as qBittorrent's own list abbreviates them in each language. */
const SPAN_UNITS: Record<Lang, readonly [string, string, string, string]> = {
  en: ['d', 'h', 'min', 's'],
  ru: ['д', 'ч', 'мин', 'с'],
};

export function formatSeconds(lang: Lang, s: number): string {
  if (!Number.isFinite(s) || s < 0) return '—';
  const whole = Math.floor(s);
  const parts = [Math.floor(whole / 86400), Math.floor(whole / 3600) % 24, Math.floor(whole / 60) % 60, whole % 60];
  const first = parts.findIndex((v) => v > 0);
  if (first === -1) return `0\u00a0${SPAN_UNITS[lang][3]}`;
  const nf = new Intl.NumberFormat(LOCALES[lang]);
  return parts
    .slice(first, first + 2)
    .map((v, i) => ({ v, unit: SPAN_UNITS[lang][first + i] }))
    .filter(({ v }, i) => i === 0 || v > 0)
    .map(({ v, unit }) => `${nf.format(v)}\u00a0${unit}`)
    .join(' ');
}

/** The start of the hour holding `at` in the zone (a half-hour zone's hours start at :30 UTC). */
export function hourStart(at: number, timeZone: string): number {
  const parts = dtf('en', timeZone, { minute: 'numeric', second: 'numeric', hourCycle: 'h23' }).formatToParts(at);
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return at - (n('minute') * 60 + n('second')) * 1000 - (at % 1000);
}

const SEPARATORS: Record<Lang, { group: string; decimal: string }> = {
  en: { group: ',', decimal: '.' },
  // What Intl writes for ru: a no-break space between thousands, a decimal comma.
  ru: { group: '\u00a0', decimal: ',' },
};

/**
 * An exact decimal string ("-1234.5") as people of the language read it ("-1,234.50", "-1 234,50"), at least
 * `minFraction` fractional digits, never fewer than it has: the digits are the string's own, never a float's.
 */
export function exactNumber(lang: Lang, value: string, minFraction = 0): string {
  const m = /^(-)?(\d+)(?:\.(\d+))?$/.exec(value);
  if (!m) return value;
  const s = SEPARATORS[lang];
  const whole = m[2].replace(/\B(?=(\d{3})+$)/g, s.group);
  const fraction = (m[3] ?? '').padEnd(minFraction, '0');
  return `${m[1] ?? ''}${whole}${fraction ? s.decimal + fraction : ''}`;
}
