import { asyncHandler } from '../../lib/lambda/async-handler';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { BatchSummary, notifyRecords } from '../../lib/telegram/notifier';
import type { StreamRecord } from '../../lib/telegram/model';
import { log, notifierDeps, telegramConfig } from './deps';

/**
 * The downloads table's stream → Telegram notifications. Never throws: every
 * record's failure is logged and stored by the notifier, so one poison record
 * cannot block the shard (a throw would make the stream redeliver the batch).
 */
export const handler = asyncHandler(
  log,
  async (event: DynamoDBStreamEvent): Promise<{ batchItemFailures: []; summary?: BatchSummary }> => {
    if (!telegramConfig().enabled) {
      log.info('telegram_notifications_disabled', { records: event.Records?.length ?? 0 });
      return { batchItemFailures: [] };
    }
    try {
      const summary = await notifyRecords(notifierDeps(), (event.Records ?? []) as StreamRecord[]);
      log.info('telegram_batch_done', { ...summary });
      return { batchItemFailures: [], summary };
    } catch (err) {
      log.error('telegram_batch_failed', { records: event.Records?.length ?? 0, err });
      return { batchItemFailures: [] };
    }
  },
);
