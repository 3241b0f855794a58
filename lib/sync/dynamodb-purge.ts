import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchWriteAll, deleteRequest } from '../aws/batch';
import { queryItems } from '../aws/query';
import type { PurgeBound, PurgeResult } from './data-store';
import {
  feedListPrefix,
  feedTokenKey,
  headKey,
  opGenerationPartition,
  opWindowPrefix,
  paceKey,
  ratePartition,
  userPartition,
} from './keys';
import { tokenPace } from './pacer';
import { SERVICES } from './tbank/contract';

/**
 * A user's synced brokerage data deleted, after their connection went
 * (DELETE /sync/connections/{user}; decision 387): every item of the user's
 * partition but the hourly head (the connection's removal deletes that, in
 * its own transaction), each operation window's generations (the current one
 * and the one a replace left behind if it died before its cleanup), the
 * calendar feed tokens' lookups, the token's rate windows and pacing schedules.
 *
 * Bounded: it stops after `maxItems` deletes or at `deadline`, whichever
 * first, and says whether anything is left; and idempotent: a window's
 * operations go before the window that names them, so a run that stops
 * anywhere leaves what remains findable by the next one. Attempt records stay:
 * they hold outcomes and counts, no brokerage figure (docs/sync.md).
 */
export async function purgeUserData(
  deps: { documents: DynamoDBDocumentClient; table: string },
  user: string,
  bound: PurgeBound,
): Promise<PurgeResult> {
  let deleted = 0;
  const pending: Array<Record<string, unknown>> = [];
  const spent = () => deleted + pending.length >= bound.maxItems || bound.now() >= bound.deadline;
  const flush = async () => {
    const keys = pending.splice(0);
    if (keys.length === 0) return;
    await batchWriteAll(deps.documents, deps.table, keys.map(deleteRequest));
    deleted += keys.length;
  };
  /** Queues a delete; false once the bound is spent (whatever is queued is written first). */
  const remove = async (key: Record<string, unknown>): Promise<boolean> => {
    pending.push(key);
    if (pending.length >= 25) await flush();
    return !spent();
  };
  const partition = async function* (pk: string) {
    yield* queryItems(deps.documents, {
      TableName: deps.table,
      KeyConditionExpression: 'PK = :p',
      ExpressionAttributeValues: { ':p': pk },
      ProjectionExpression: 'PK, SK, account_id, #m, generation, previous_generation, token_sha256',
      ExpressionAttributeNames: { '#m': 'month' },
      ConsistentRead: true,
    });
  };
  const head = headKey(user).SK;
  for await (const item of partition(userPartition(user))) {
    if (item.SK === head) continue;
    if (String(item.SK).startsWith(opWindowPrefix())) {
      for (const generation of [item.generation, item.previous_generation]) {
        if (typeof generation !== 'string') continue;
        const pk = opGenerationPartition(user, String(item.account_id), String(item.month), generation);
        for await (const op of partition(pk)) if (!(await remove({ PK: op.PK, SK: op.SK }))) return stop();
      }
      // The window after its operations: flushed first, so a stop here never orphans them.
      await flush();
    }
    // A calendar feed token: its lookup by hash (outside the user's partition) before the listing that names it.
    if (String(item.SK).startsWith(feedListPrefix) && typeof item.token_sha256 === 'string') {
      if (!(await remove(feedTokenKey(item.token_sha256)))) return stop();
      await flush();
    }
    if (!(await remove({ PK: item.PK, SK: item.SK }))) return stop();
  }
  for await (const item of partition(ratePartition(user)))
    if (!(await remove({ PK: item.PK, SK: item.SK }))) return stop();
  // The pacing schedules' keys are known, not found: deleted whether or not they exist, and not counted.
  await flush();
  const found = deleted;
  for (const service of SERVICES) pending.push(paceKey(tokenPace(user, service)));
  await flush();
  return { deleted: found, done: true };

  async function stop(): Promise<PurgeResult> {
    await flush();
    return { deleted, done: false };
  }
}
