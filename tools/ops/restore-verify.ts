import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tableSettings, TableSettings } from './restore';
import { countItems, getAll, keyOf, RawItem, sameItem, scanItems } from './table-copy';

/**
 * The restore drill's check (docs/operations.md#restoring-a-table): both
 * tables counted by consistent scans, a sample of the source's items looked
 * up in the restored table and compared attribute by attribute, and the
 * settings a restore drops compared with the source's. After a restore to an
 * earlier time, differences in the sample are expected (the items changed
 * since); after a copy, none are.
 */

export interface Verification {
  sourceItems: number;
  targetItems: number;
  sample: { size: number; equal: number; differ: number; missing: number };
  settings: Array<{ setting: string; expected: string; actual: string; ok: boolean | 'unsupported' }>;
}

/** Counts (consistent scans), a sample of the source's items looked up in the target, the settings compared. */
export async function verifyRestore(
  client: DynamoDBClient,
  source: TableSettings,
  target: string,
  sampleSize: number,
): Promise<Verification> {
  const [sourceItems, targetItems] = await Promise.all([countItems(client, source.name), countItems(client, target)]);
  const sample: RawItem[] = [];
  for await (const page of scanItems(client, source.name, { segments: 1 })) {
    sample.push(...page.slice(0, sampleSize - sample.length));
    if (sample.length >= sampleSize) break;
  }
  const found = await getAll(
    client,
    target,
    sample.map((i) => keyOf(i, source.keyNames)),
  );
  const byKey = new Map(found.map((i) => [JSON.stringify(keyOf(i, source.keyNames)), i]));
  let equal = 0;
  let differ = 0;
  for (const item of sample) {
    const there = byKey.get(JSON.stringify(keyOf(item, source.keyNames)));
    if (!there) continue;
    if (sameItem(item, there)) equal++;
    else differ++;
  }
  const restored = await tableSettings(client, target);
  const settings: Verification['settings'] = [
    { setting: 'stream', expected: source.stream ?? 'off', actual: restored.stream ?? 'off' },
    { setting: 'TTL', expected: source.ttlAttribute ?? 'off', actual: restored.ttlAttribute ?? 'off' },
    {
      setting: 'deletion protection',
      expected: String(source.deletionProtection),
      actual: String(restored.deletionProtection),
    },
    { setting: 'indexes', expected: indexNames(source), actual: indexNames(restored) },
  ].map((s) => ({ ...s, ok: s.expected === s.actual }));
  settings.push(
    restored.pitr === 'unsupported'
      ? { setting: 'PITR', expected: 'on', actual: 'not on this endpoint', ok: 'unsupported' }
      : { setting: 'PITR', expected: 'on', actual: restored.pitr.enabled ? 'on' : 'off', ok: restored.pitr.enabled },
  );
  return {
    sourceItems,
    targetItems,
    sample: { size: sample.length, equal, differ, missing: sample.length - equal - differ },
    settings,
  };
}

const indexNames = (s: TableSettings) =>
  [...(s.create.GlobalSecondaryIndexes ?? []), ...(s.create.LocalSecondaryIndexes ?? [])]
    .map((i) => i.IndexName)
    .sort()
    .join(',') || 'none';
