import { listDownloads } from '../../lib/downloads/service';
import { ErrorCode, HttpError } from '../../lib/http/errors';
import { pathId } from '../../lib/http/request';
import { pageQuery } from '../../lib/web/forms';
import { webHandler } from '../../lib/web/handler';
import { parseConsoleQuery, parseJobId } from '../../lib/web/console-requests';
import { failuresPage, scanJobPage, scanListPage, syncListPage, syncUserPage } from '../../lib/web/console';
import { summaryOf } from '../../lib/scan/model';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { rawAnswerOf } from '../../lib/scan/raw-answer';
import { scanSettings, scanStores } from '../../lib/scan/wiring';
import { syncServices } from '../../lib/sync/wiring';
import { deliveryStore } from '../../lib/telegram/wiring';
import { createLogger } from '../../lib/log';
import { localMetrics } from '../../lib/metrics/local';

/**
 * The operator console's pages (lib/web/console.ts): GET /scan, /scan/{job_id},
 * /scan/{job_id}/raw, /sync, /sync/{user} and /failures. Reads go through the
 * domains' stores and services; the authorizer has already refused a session
 * without the route's scope. The one write, POST /failures/{id}/retry, is its
 * own function (console-retry.ts): only it holds the bot token and loads the
 * Telegram client.
 */

/** The scan window and how many of its jobs are read at most (the chart and the counts; the table pages). */
const SCAN_HOURS = 24;
export const SCAN_READ_CAP = 2000;
/** Attempts read for the strip: 48 hours plus the restarts an hour may hold. */
const ATTEMPTS_READ = 96;

const log = createLogger({ domain: 'console' });

export const handler = webHandler(
  log,
  async ({ event, viewer, ui }) => {
    const now = Date.now();
    const query = parseConsoleQuery(pageQuery(event.queryStringParameters));
    // The same EMF lines an alarm is fed, read back from the local stack's log (none on AWS: CloudWatch has them).
    const metrics = { points: localMetrics()?.read(), now };
    switch (event.routeKey) {
      case 'GET /scan': {
        const [jobs, inUse] = await Promise.all([
          scanStores().jobs.recent(now - SCAN_HOURS * 3600_000, now, SCAN_READ_CAP + 1),
          scanStores().jobs.slotsInUse(),
        ]);
        return {
          page: scanListPage(ui, {
            jobs: jobs.slice(0, SCAN_READ_CAP),
            truncated: jobs.length > SCAN_READ_CAP,
            now,
            hours: SCAN_HOURS,
            phase: query.phase,
            prefix: query.prefix,
            page: query.page ?? 1,
            slots: { inUse, max: scanSettings().maxInflight },
            metrics: { ...metrics, answerBoundMs: scanSettings().settleMs + scanSettings().pollEveryMs + 1000 },
          }),
        };
      }
      case 'GET /scan/{job_id}': {
        const job = await scanStores().jobs.get(parseJobId(event));
        if (!job) throw new HttpError(404, ErrorCode.NOT_FOUND, 'scan job not found');
        return { page: scanJobPage(ui, job, summaryOf(job)) };
      }
      case 'GET /scan/{job_id}/raw': {
        const jobId = parseJobId(event);
        const body = await rawAnswerOf(scanStores(), jobId);
        if (body === undefined) throw new HttpError(404, ErrorCode.NOT_FOUND, 'no raw answer for this job');
        return { file: { body, contentType: 'application/json', name: `${jobId}.raw.json` } };
      }
      case 'GET /sync': {
        const { hourly, connections } = syncServices();
        const page = await connections.connectionPage(100, query.after);
        const heads = new Map((await hourly.headsOf(page.items.map((c) => c.user_id))).map((h) => [h.user_id, h]));
        return {
          page: syncListPage(ui, {
            users: page.items.map((c) => ({ ...c, head: heads.get(c.user_id) })),
            next: page.next,
            paged: Boolean(query.after),
            metrics,
          }),
        };
      }
      case 'GET /sync/{user}': {
        const user = pathId(event, 'user');
        const { hourly, data, connections, admit } = syncServices();
        const attempts = await hourly.attempts(user, ATTEMPTS_READ);
        // No attempt yet: a connection waiting for its first sync says where it stands.
        const queue = attempts.length === 0 ? await connections.firstSyncQueue(user, now, admit) : undefined;
        if (attempts.length === 0 && !queue)
          throw new HttpError(404, ErrorCode.NOT_FOUND, 'no hourly sync for this user');
        // The list already holds the chosen attempt (the current one from the head): only its rows are read.
        const chosen = attempts.find((a) => a.attempt_id === (query.attempt ?? attempts[0].attempt_id));
        const [rows, rates] = await Promise.all([chosen ? hourly.stepRows(chosen.attempt_id) : [], data.rateUse(user)]);
        return {
          page: syncUserPage(ui, {
            user,
            attempts,
            selected: chosen && { ...chosen, rows },
            rates,
            now,
            ...(queue ? { queue: { ...queue, perMinute: (admit.calls * admit.firstShare) / admit.firstCost } } : {}),
          }),
        };
      }
      default: {
        const [failures, stuck, failed] = await Promise.all([
          deliveryStore().listFailures(100),
          listDownloads(downloadsDeps(), { state: 'stuck', limit: 50 }),
          listDownloads(downloadsDeps(), { state: 'failed', limit: 50 }),
        ]);
        return {
          page: failuresPage(ui, {
            failures,
            review: [...stuck.items, ...failed.items],
            viewer: viewer!,
            retried: query.retried,
            metrics,
          }),
        };
      }
    }
  },
  { notFound: 'noSuchItem' },
);
