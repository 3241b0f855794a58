import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { perEnvironment } from '../config';
import { ErrorCode, HttpError } from '../http/errors';
import { header } from '../http/request';
import { isLoopbackHost } from '../auth/session';
import { createFormat, isLang, LANGUAGES, loadLocaleSettings, negotiate, type Format, type Lang } from '../i18n';
import { consoleMessages, type ConsoleMessages } from './messages/console';
import { uiMessages, type UiMessages } from './messages/ui';

/**
 * The language and time zone of one request, decided once at the edge
 * (webHandler) and handed to every page: the deployment's UI_LANGUAGE if set,
 * else the person's choice (a `?lang=` link sets the `lang` cookie), else the
 * browser's Accept-Language, else English; times in UI_TIME_ZONE (UTC by
 * default), formatted on the server so every browser reads the same
 * (decisions 330, 333).
 */

export interface Ui {
  lang: Lang;
  /** Dates, times, numbers and plurals in the language and the configured zone. */
  f: Format;
  /** The downloads UI's and the shell's messages. */
  t: UiMessages;
  /** The operator console's messages. */
  c: ConsoleMessages;
  /** Whether the person may switch (false when UI_LANGUAGE fixes the language). */
  switchable: boolean;
}

export const LANG_COOKIE = 'lang';
const YEAR_S = 365 * 24 * 3600;

export const localeSettings = perEnvironment(() => loadLocaleSettings());

export function uiOf(lang: Lang, timeZone: string, switchable = true): Ui {
  return { lang, f: createFormat(lang, timeZone), t: uiMessages(lang), c: consoleMessages(lang), switchable };
}

function cookieValue(event: APIGatewayProxyEventV2): string | undefined {
  const all = event.cookies ?? (header(event.headers, 'cookie') ?? '').split(';');
  for (const c of all) {
    const [name, value] = c.trim().split('=');
    if (name === LANG_COOKIE) return value;
  }
  return undefined;
}

/**
 * The request's Ui and, when `?lang=` chose a language, the cookie that keeps
 * it. The `lang` field is taken out of the query, so the pages' own query
 * validators never see it; a value we do not ship is a 400.
 */
export function negotiateUi(event: APIGatewayProxyEventV2): { ui: Ui; cookie?: string } {
  const settings = localeSettings();
  const query = event.queryStringParameters;
  let chosen: string | undefined;
  let cookie: string | undefined;
  if (query && Object.prototype.hasOwnProperty.call(query, 'lang')) {
    const asked = query.lang;
    delete query.lang;
    if (!isLang(asked))
      throw new HttpError(400, ErrorCode.INVALID_REQUEST, `lang must be one of ${LANGUAGES.join(', ')}`);
    chosen = asked;
    const secure = isLoopbackHost(header(event.headers, 'host')) ? '' : '; Secure';
    cookie = `${LANG_COOKIE}=${asked}; Path=/; Max-Age=${YEAR_S}; HttpOnly; SameSite=Lax${secure}`;
  }
  const lang = negotiate({
    fixed: settings.language,
    chosen: chosen ?? cookieValue(event),
    acceptLanguage: header(event.headers, 'accept-language'),
  });
  return { ui: uiOf(lang, settings.timeZone, !settings.language), cookie: settings.language ? undefined : cookie };
}

/** The Ui of a request the edge refused before negotiating (an error page): never throws. */
export function safeUi(event: APIGatewayProxyEventV2): Ui {
  try {
    return negotiateUi(event).ui;
  } catch {
    const settings = (() => {
      try {
        return localeSettings();
      } catch {
        return { language: undefined, timeZone: 'UTC' };
      }
    })();
    return uiOf(
      negotiate({
        fixed: settings.language,
        chosen: cookieValue(event),
        acceptLanguage: header(event.headers, 'accept-language'),
      }),
      settings.timeZone,
      !settings.language,
    );
  }
}
