import { PutItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { newId } from '../lib/ident';
import { BenchStack, report, Row, throughput } from './support';

/**
 * DynamoDB Local: the price of a guard. Plain PutItem vs conditional PutItem
 * (attribute_not_exists, always succeeding) vs a 3-item TransactWriteItems
 * (the shape of an ingest: entity + membership + guard). Rounds interleave the
 * three kinds so drift of the emulator (JIT warm-up, GC) hits all alike.
 */
export async function dynamodbWrites(
  bench: BenchStack,
  opsPerKind = 3000,
  concurrency = 8,
  rounds = 3,
): Promise<Row[]> {
  const TableName = bench.config.tables.downloads;
  const { dynamodb } = bench.aws;
  const item = (pk: string, sk: string) => ({ PK: { S: pk }, SK: { S: sk }, payload: { S: 'x'.repeat(200) } });

  const kinds: Record<string, (i: number) => Promise<unknown>> = {
    PutItem: () => dynamodb.send(new PutItemCommand({ TableName, Item: item(`BENCH#${newId()}`, 'META') })),
    'PutItem if attribute_not_exists': () =>
      dynamodb.send(
        new PutItemCommand({
          TableName,
          Item: item(`BENCH#${newId()}`, 'META'),
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      ),
    'TransactWriteItems, 3 conditional puts': () => {
      const id = newId();
      return dynamodb.send(
        new TransactWriteItemsCommand({
          TransactItems: [`BENCH#${id}|META`, `BENCH#${id}|MEMBER`, `BENCHGUARD#${id}|ACTIVE`].map((key) => {
            const [pk, sk] = key.split('|');
            return { Put: { TableName, Item: item(pk, sk), ConditionExpression: 'attribute_not_exists(PK)' } };
          }),
        }),
      );
    },
  };

  for (const op of Object.values(kinds)) await throughput(200, concurrency, op); // warm-up
  const seconds: Record<string, number> = Object.fromEntries(Object.keys(kinds).map((k) => [k, 0]));
  const perRound = Math.ceil(opsPerKind / rounds);
  for (let r = 0; r < rounds; r++) {
    for (const [name, op] of Object.entries(kinds))
      seconds[name] += perRound / (await throughput(perRound, concurrency, op));
  }
  return Object.keys(kinds).map((name) => ({ name, opsPerSecond: (perRound * rounds) / seconds[name] }));
}

export function reportDynamodbWrites(rows: Row[]): void {
  report('DynamoDB Local: write cost of a guard (concurrency 8)', rows);
}
