import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import fs from 'node:fs';
import path from 'node:path';
import type { StreamRecord } from '../../../lib/telegram/model';

/** Where the audit reads: whole tables, S3 objects, the downloads table's stream, the stack's log files. */

export async function allItems(documents: DynamoDBDocumentClient, table: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(new ScanCommand({ TableName: table, ExclusiveStartKey, ConsistentRead: true }));
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

export async function objectText(s3: S3Client, bucket: string, key: string): Promise<string | undefined> {
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return await out.Body?.transformToString('utf8');
  } catch {
    return undefined;
  }
}

/** Every record of a table's stream, from the trim horizon of each shard, in the shape Lambda hands over. */
export async function streamRecords(
  dynamodb: DynamoDBClient,
  at: { region: string; endpoint?: string },
  table: string,
): Promise<StreamRecord[]> {
  const arn = (await dynamodb.send(new DescribeTableCommand({ TableName: table }))).Table?.LatestStreamArn;
  if (!arn) throw new Error(`${table} has no stream`);
  // DynamoDB Local serves its streams on its own endpoint, as the stack's stream bridge reads them.
  const streams = new DynamoDBStreamsClient({ region: at.region, endpoint: at.endpoint });
  const out: StreamRecord[] = [];
  try {
    let start: string | undefined;
    do {
      const page = await streams.send(new DescribeStreamCommand({ StreamArn: arn, ExclusiveStartShardId: start }));
      for (const shard of page.StreamDescription?.Shards ?? []) {
        let iterator = (
          await streams.send(
            new GetShardIteratorCommand({ StreamArn: arn, ShardId: shard.ShardId, ShardIteratorType: 'TRIM_HORIZON' }),
          )
        ).ShardIterator;
        while (iterator) {
          const got = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
          for (const r of got.Records ?? [])
            out.push({
              eventID: r.eventID,
              eventName: r.eventName,
              dynamodb: {
                ApproximateCreationDateTime: r.dynamodb?.ApproximateCreationDateTime
                  ? Math.floor(r.dynamodb.ApproximateCreationDateTime.getTime() / 1000)
                  : undefined,
                SequenceNumber: r.dynamodb?.SequenceNumber,
                NewImage: r.dynamodb?.NewImage as never,
                OldImage: r.dynamodb?.OldImage as never,
              },
            });
          // An open shard answers an empty page with a next iterator forever: its end for now.
          iterator = got.Records?.length ? got.NextShardIterator : undefined;
        }
      }
      start = page.StreamDescription?.LastEvaluatedShardId;
    } while (start);
  } finally {
    streams.destroy();
  }
  return out;
}

/** The text of every log file under a folder (the stack's logs/). */
export function logTexts(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    if (name.endsWith('.log')) out.set(name, fs.readFileSync(path.join(dir, name), 'utf8'));
  return out;
}
