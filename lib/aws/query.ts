import { DynamoDBDocumentClient, QueryCommand, QueryCommandInput } from '@aws-sdk/lib-dynamodb';

/** Every item a Query matches, page after page, as they come. */
export async function* queryItems(
  client: DynamoDBDocumentClient,
  input: QueryCommandInput,
): AsyncGenerator<Record<string, unknown>> {
  let ExclusiveStartKey = input.ExclusiveStartKey;
  do {
    const page = await client.send(new QueryCommand({ ...input, ExclusiveStartKey }));
    yield* page.Items ?? [];
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
}

/** The first `cap` items a Query matches (all of them by default). */
export async function queryAll(
  client: DynamoDBDocumentClient,
  input: QueryCommandInput,
  cap = Infinity,
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const item of queryItems(client, input)) {
    out.push(item);
    if (out.length >= cap) break;
  }
  return out;
}
