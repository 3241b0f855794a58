import { ErrorCode, HttpError } from '../../lib/http/errors';
import { webHandler } from '../../lib/web/handler';
import { parseFailureId } from '../../lib/web/console-requests';
import { retryFailure, RetryOutcome } from '../../lib/telegram/retry';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { notifierDeps } from '../../lib/telegram/notifier-wiring';
import { chatLanguages } from '../../lib/telegram/wiring';
import { createLogger } from '../../lib/log';
import { audit, AUDIT_EVENTS } from '../../lib/log/audit';

/**
 * POST /failures/{id}/retry: the operator console's one write, a failed
 * Telegram delivery sent again (lib/telegram/retry.ts). Its own function so
 * that only it carries the bot token and loads the Telegram client; the
 * console's pages (console.ts) read without either.
 */

const log = createLogger({ domain: 'console' });

/** How a retry that sent nothing is answered. */
const RETRY_REFUSED: Record<Exclude<RetryOutcome['outcome'], 'sent'>, [number, ErrorCode, string]> = {
  missing: [404, ErrorCode.NOT_FOUND, 'no such failure'],
  taken: [409, ErrorCode.ALREADY_RETRIED, 'this delivery was retried already: it is never sent twice'],
  'no-download': [404, ErrorCode.NOT_FOUND, 'nothing to send: the download is gone or the record is unreadable'],
  refused: [502, ErrorCode.TELEGRAM_REFUSED, 'Telegram refused the message; nothing was sent, try again'],
  unknown: [502, ErrorCode.TELEGRAM_REFUSED, 'Telegram did not answer: it may have arrived, so it is not sent again'],
};

export const handler = webHandler(
  log,
  async ({ event, viewer }) => {
    const id = parseFailureId(event);
    const n = notifierDeps();
    const who = { principal: viewer?.principal, via: 'console' as const };
    const done = await retryFailure(
      {
        deliveries: n.deliveries,
        sender: n.sender,
        languages: chatLanguages(),
        locale: n.locale,
        uiBase: n.uiBase,
        log: n.log,
        downloads: downloadsDeps().store,
        now: Date.now,
      },
      id,
    ).catch((err: unknown) => {
      audit(log, AUDIT_EVENTS.failureRetried, who, { failure_id: id, outcome: 'error' });
      throw err;
    });
    audit(log, AUDIT_EVENTS.failureRetried, who, { failure_id: id, outcome: done.outcome });
    if (done.outcome !== 'sent') {
      const [status, code, message] = RETRY_REFUSED[done.outcome];
      throw new HttpError(status, code, 'reason' in done ? `${message} (${done.reason})` : message);
    }
    return { redirect: `/failures?retried=${id}` };
  },
  { notFound: 'noSuchItem' },
);
