import { TransactItem } from '../aws/transact';
import { TransactionCancelledError } from '../aws/errors';
import type { Condition, HeldGuard, WritePlan } from './guards';
import { guardFromItem } from './keys';

/**
 * The downloads table's side of a plan (guards.ts): each planned write as a
 * TransactWriteItems item with its condition spelled for DynamoDB, and a
 * cancelled transaction read back as the guards that refused it. No choice
 * is made here: the plan's writes, conditions and order go out as they are.
 */

export function transactItems(table: string, plan: WritePlan): TransactItem[] {
  return plan.writes.map((w): TransactItem => {
    const spelled = w.when ? conditionOf(w.when) : undefined;
    const condition = spelled
      ? {
          ConditionExpression: spelled.expression,
          ...(spelled.values ? { ExpressionAttributeValues: spelled.values } : {}),
        }
      : {};
    if (!('put' in w)) return { Delete: { TableName: table, Key: w.delete, ...condition } };
    if (!w.keep?.length) return { Put: { TableName: table, Item: w.put, ...condition } };
    const update = keepingUpdate(w.put, w.keep);
    // The condition's placeholders (`:self`, `:victim`…) never collide with the update's (`:a<n>`).
    const values = { ...update.ExpressionAttributeValues, ...spelled?.values };
    return { Update: { TableName: table, ...update, ...condition, ExpressionAttributeValues: values } };
  });
}

/**
 * A put as an update: every attribute set, except those in `keep`, which are set only where the item has none
 * (`if_not_exists`). Attributes are named through placeholders (no reserved word can break the expression).
 */
function keepingUpdate(item: Record<string, unknown>, keep: readonly string[]) {
  const { PK, SK, ...rest } = item;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = Object.entries(rest).map(([name, value], i) => {
    names[`#a${i}`] = name;
    values[`:a${i}`] = value;
    return keep.includes(name) ? `#a${i} = if_not_exists(#a${i}, :a${i})` : `#a${i} = :a${i}`;
  });
  return {
    Key: { PK, SK },
    UpdateExpression: `SET ${sets.join(', ')}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

function conditionOf(c: Condition): { expression: string; values?: Record<string, unknown> } {
  if ('absent' in c) return { expression: 'attribute_not_exists(PK)' };
  if ('revisionIs' in c) return { expression: 'revision = :rev', values: { ':rev': c.revisionIs } };
  if ('freeOrHeldBy' in c)
    return { expression: 'attribute_not_exists(PK) OR download_id = :self', values: { ':self': c.freeOrHeldBy } };
  if ('ownGuard' in c) return { expression: 'download_id = :self', values: { ':self': c.ownGuard } };
  if ('takenFrom' in c) return { expression: 'download_id = :victim', values: { ':victim': c.takenFrom } };
  const unknown: never = c; // a new kind of condition must be spelled above
  throw new Error(`no DynamoDB condition for ${JSON.stringify(unknown)}`);
}

/** The guards whose condition failed, with their holder, in transaction (= hash) order. */
export function refusedGuards(err: unknown): HeldGuard[] {
  if (!(err instanceof TransactionCancelledError)) return [];
  return err.reasons.flatMap(({ code, item }) => {
    if (code !== 'ConditionalCheckFailed' || item?.entity !== 'guard') return [];
    const guard = guardFromItem(item);
    return [{ infohash: guard.infohash, ownerId: guard.download_id }];
  });
}
