import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { TableSettings } from './restore';
import { getAll, keyOf, RawItem, sameItem, scanItems, writeAll } from './table-copy';

export interface CopyBackPlan {
  puts: number;
  deletes: number;
  unchanged: number;
  examples: { put: string[]; delete: string[] };
}

/**
 * Cut-over (b): make `original` hold exactly what `restored` holds. Pass 1
 * puts every restored item the original lacks or holds otherwise; pass 2
 * deletes what the original has and the restored table has not. Without
 * `execute` it only counts. Writers must be stopped first.
 */
export async function copyBack(
  client: DynamoDBClient,
  restored: TableSettings,
  original: TableSettings,
  options: { execute: boolean; onProgress?: (plan: CopyBackPlan) => void },
): Promise<CopyBackPlan> {
  if (JSON.stringify(restored.create.KeySchema) !== JSON.stringify(original.create.KeySchema))
    throw new Error(`${restored.name} and ${original.name} have different keys: not a restore of it`);
  const keys = original.keyNames;
  const plan: CopyBackPlan = { puts: 0, deletes: 0, unchanged: 0, examples: { put: [], delete: [] } };
  const show = (item: RawItem) => keys.map((k) => Object.values(item[k])[0]).join(' / ');
  for await (const page of scanItems(client, restored.name)) {
    const there = new Map(
      (
        await getAll(
          client,
          original.name,
          page.map((i) => keyOf(i, keys)),
        )
      ).map((i) => [JSON.stringify(keyOf(i, keys)), i]),
    );
    const puts = page.filter((item) => {
      const current = there.get(JSON.stringify(keyOf(item, keys)));
      return !current || !sameItem(item, current);
    });
    plan.unchanged += page.length - puts.length;
    plan.puts += puts.length;
    plan.examples.put.push(...puts.slice(0, 5 - plan.examples.put.length).map(show));
    if (options.execute)
      await writeAll(
        client,
        original.name,
        puts.map((Item) => ({ PutRequest: { Item } })),
      );
    options.onProgress?.(plan);
  }
  for await (const page of scanItems(client, original.name, { projection: keys })) {
    const kept = new Set((await getAll(client, restored.name, page)).map((i) => JSON.stringify(keyOf(i, keys))));
    const gone = page.filter((k) => !kept.has(JSON.stringify(keyOf(k, keys))));
    plan.deletes += gone.length;
    plan.examples.delete.push(...gone.slice(0, 5 - plan.examples.delete.length).map(show));
    if (options.execute)
      await writeAll(
        client,
        original.name,
        gone.map((Key) => ({ DeleteRequest: { Key } })),
      );
    options.onProgress?.(plan);
  }
  return plan;
}
