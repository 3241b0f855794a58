import { ErrorCode, HttpError } from '../../lib/http/errors';
import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { loadLocaleSettings } from '../../lib/i18n';
import { perEnvironment } from '../../lib/config';
import { parseFeedQuery } from '../../lib/sync/holdings-requests';
import { holdingsServices } from '../../lib/sync/holdings-wiring';
import { calendarFeed, feedWords } from '../../lib/sync/ical';
import { syncLog } from '../../lib/sync/wiring';

const DAY = 86_400_000;
/** What a subscribed calendar holds: the last 90 days' payments and the next year's. */
const PAST_DAYS = 90;
const AHEAD_DAYS = 366;
const locale = perEnvironment(() => loadLocaleSettings());
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * GET /sync/{user}/calendar.ics?token=tsf_… (no authorizer: a calendar app cannot send a bearer token).
 * The token is the feed's own (lib/sync/feed-tokens.ts): one unknown, revoked, or another user's is a
 * 404 like a user without a feed. The token is in the query, never the path: neither the API's access
 * log (route keys only) nor serverless offline's request lines (paths only) carry it, and nothing here logs it.
 */
export const handler = httpHandler(
  syncLog,
  async (event) => {
    const user = pathId(event, 'user');
    const q = parseFeedQuery(event.queryStringParameters ?? {});
    const { feeds, holdings } = holdingsServices();
    if (!(await feeds.opens(q.token, user))) throw new HttpError(404, ErrorCode.NOT_FOUND, 'not found');
    const now = Date.now();
    const calendar = await holdings.calendar(user, {
      from: day(now - PAST_DAYS * DAY),
      to: day(now + AHEAD_DAYS * DAY),
    });
    const lang = q.lang ?? locale().language ?? 'en';
    return {
      statusCode: 200,
      headers: {
        'content-type': 'text/calendar; charset=utf-8',
        'content-disposition': 'inline; filename="payments.ics"',
        'cache-control': 'private, no-store',
      },
      body: calendarFeed(calendar.items, { user, now, words: feedWords(lang) }),
    };
  },
  { publicRoute: true },
);
