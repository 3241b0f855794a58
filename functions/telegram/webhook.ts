import { BotError } from 'grammy';
import { httpHandler } from '../../lib/http/handler';
import { UpdateInProgressError, UpdateNotClaimedError } from '../../lib/telegram/errors';
import { ErrorCode, HttpError } from '../../lib/http/errors';
import { jsonBody } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { parseUpdate, secretMatches, SECRET_HEADER, MalformedUpdateError } from '../../lib/telegram/webhook';
import { telegramConfig } from '../../lib/telegram/wiring';
import { log, telegramBot } from './deps';

/**
 * POST /telegram/webhook: Telegram's Updates. No bearer authorizer (Telegram
 * cannot send one): the secret header, compared in constant time, is the
 * credential; without it nothing is parsed. Failures inside the bot are
 * logged and still answered 200, or Telegram would re-deliver them forever.
 * A re-delivery Telegram makes anyway (this answer came too late) is known by
 * its update_id and does nothing once handled (lib/telegram/bot.ts, decision
 * 183); one still being handled is answered 503, so Telegram tries it again
 * (decision 356).
 */
export const handler = httpHandler(
  log,
  async (event) => {
    const tg = telegramConfig();
    if (!tg.enabled) throw new HttpError(503, ErrorCode.NOT_CONFIGURED, 'the Telegram bot is not configured');
    // The secret is optional in the settings (only this function is given it): without it, nothing gets in.
    if (!tg.webhookSecret) {
      log.error('telegram_webhook_secret_missing');
      throw new HttpError(503, ErrorCode.NOT_CONFIGURED, 'the Telegram webhook secret is not configured');
    }
    if (!secretMatches(event.headers?.[SECRET_HEADER], tg.webhookSecret)) {
      log.warn('telegram_webhook_unauthorized', { source_ip: event.requestContext?.http?.sourceIp });
      throw new HttpError(401, ErrorCode.UNAUTHORIZED, 'missing or wrong secret token');
    }
    let update;
    try {
      update = parseUpdate(jsonBody(event));
    } catch (err) {
      if (err instanceof MalformedUpdateError) throw new HttpError(400, ErrorCode.INVALID_REQUEST, err.message);
      throw err;
    }
    const bot = await telegramBot();
    try {
      await bot.handleUpdate(update);
    } catch (err) {
      // Not handled now (another delivery holds it, or the ledger did not answer): Telegram delivers it again.
      if (err instanceof BotError && err.error instanceof UpdateInProgressError) {
        log.warn('telegram_update_in_progress', { update_id: update.update_id });
        throw new HttpError(503, ErrorCode.BUSY, 'this update is being handled; deliver it again later');
      }
      if (err instanceof BotError && err.error instanceof UpdateNotClaimedError) {
        log.error('telegram_update_ledger_failed', { update_id: update.update_id, err: err.error.cause });
        throw new HttpError(503, ErrorCode.UNAVAILABLE, 'the update ledger is unavailable; deliver it again later');
      }
      log.error('telegram_update_failed', { update_id: update.update_id, err });
    }
    return json(200, { ok: true });
  },
  { publicRoute: true },
);
