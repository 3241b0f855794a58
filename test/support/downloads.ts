import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDownloadStore } from '../../lib/downloads/dynamodb-store';
import { Infohash, parseInfohash } from '../../lib/downloads/infohash';
import { isActive } from '../../lib/downloads/model';
import { stackClients, stackConfig } from './stack';
import { randomBytes } from 'node:crypto';

export function downloadsStore() {
  const aws = stackClients();
  const table = stackConfig().tables.downloads;
  return { aws, table, store: new DynamoDownloadStore({ documents: aws.documents, table }) };
}

export const v1 = (): Infohash => parseInfohash(randomBytes(20).toString('hex'));
export const v2 = (): Infohash => parseInfohash(randomBytes(32).toString('hex'));

/** Every item of the table whose keys mention one of these hashes or ids. */
export async function itemsAbout(aws: ReturnType<typeof stackClients>, table: string, needles: string[]) {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await aws.documents.send(new ScanCommand({ TableName: table, ExclusiveStartKey }));
    items.push(...(page.Items ?? []).filter((i) => needles.some((n) => `${i.PK}|${i.SK}`.includes(n))));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

/**
 * The invariant, checked from the raw items: for each hash, the downloads that
 * are active AND hold it number at most one, and the guard names exactly that one.
 */
export async function assertOneActivePerHash(aws: ReturnType<typeof stackClients>, table: string, hashes: string[]) {
  const items = await itemsAbout(
    aws,
    table,
    hashes.map((h) => `IH#${h}`),
  );
  const downloadIds = [...new Set(items.filter((i) => i.entity === 'membership').map((i) => i.download_id as string))];
  const store = new DynamoDownloadStore({ documents: aws.documents, table });
  const downloads = (await Promise.all(downloadIds.map((id) => store.get(id)))).filter((d) => d !== undefined);
  for (const hash of hashes) {
    const active = downloads.filter((d) => isActive(d.state) && d.infohashes.some((h) => h.infohash === hash));
    expect(active.length).toBeLessThanOrEqual(1);
    const guard = items.find((i) => i.PK === `IH#${hash}` && i.SK === 'ACTIVE');
    expect(guard?.download_id).toBe(active[0]?.id);
  }
}
