import { asyncHandler } from '../../lib/lambda/async-handler';
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { BatchSummary, notifyRecords } from '../../lib/telegram/notifier';
import type { StreamRecord } from '../../lib/telegram/model';
import { notifierDeps } from '../../lib/telegram/notifier-wiring';
import { telegramConfig, telegramLog as log } from '../../lib/telegram/wiring';

/** Time kept back from the invocation's end: one send (its timeout) and the writes that record it. */
const SAFETY_MS = 3000;

type Response = { batchItemFailures: Array<{ itemIdentifier: string }>; summary?: BatchSummary };

/**
 * The downloads table's stream → Telegram notifications, paced (lib/telegram/notifier.ts).
 * What the pace does not allow before the invocation ends is reported as the
 * first batch item failure (ReportBatchItemFailures): the stream hands that
 * record and the ones after it to the next invocation, in order, so a burst
 * arrives late, never lost. Nothing else is reported: every other record's
 * failure is logged and stored by the notifier, so one poison record cannot
 * block the shard.
 */
export const handler = asyncHandler(log, async (event: DynamoDBStreamEvent, context: Context): Promise<Response> => {
  if (!telegramConfig().enabled) {
    log.info('telegram_notifications_disabled', { records: event.Records?.length ?? 0 });
    return { batchItemFailures: [] };
  }
  const deps = notifierDeps();
  const remaining = typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : 0;
  const budget = remaining > 0 ? remaining : 60_000;
  const deadline = Date.now() + budget - telegramConfig().timeoutMs - SAFETY_MS;
  try {
    const summary = await notifyRecords(deps, (event.Records ?? []) as StreamRecord[], { deadline });
    log.info('telegram_batch_done', { ...summary });
    return {
      batchItemFailures: summary.resumeFrom ? [{ itemIdentifier: summary.resumeFrom }] : [],
      summary,
    };
  } catch (err) {
    log.error('telegram_batch_failed', { records: event.Records?.length ?? 0, err });
    return { batchItemFailures: [] };
  }
});
