import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailed } from '../aws/conditions';
import { isoTime, parseIsoTime } from '../clock';
import { loginGateKey } from './keys';
import type { LoginGateState, LoginGateStore } from './login-gate';

/** The login gate as one item of the downloads table (lib/torrents/keys.ts). Thin: policy is in login-gate.ts. */
export class DynamoLoginGateStore implements LoginGateStore {
  constructor(private readonly deps: { documents: DynamoDBDocumentClient; table: string }) {}

  async read(): Promise<LoginGateState | undefined> {
    const { Item } = await this.deps.documents.send(
      new GetCommand({ TableName: this.deps.table, Key: loginGateKey(), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    return {
      refusals: typeof Item.refusals === 'number' ? Item.refusals : 0,
      // An unreadable time closes nothing (the gate only ever delays logins).
      nextTryAt: parseIsoTime(String(Item.next_try_at)) ?? 0,
      reason: Item.reason === 'banned' ? 'banned' : 'refused',
      fingerprint: typeof Item.fingerprint === 'string' ? Item.fingerprint : '',
    };
  }

  async replace(state: LoginGateState, seenNextTryAt: number): Promise<boolean> {
    try {
      await this.write(state, {
        ConditionExpression: 'next_try_at = :seen',
        ExpressionAttributeValues: { ':seen': isoTime(seenNextTryAt) },
      });
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  async put(state: LoginGateState): Promise<void> {
    await this.write(state, {});
  }

  async clear(): Promise<void> {
    await this.deps.documents.send(new DeleteCommand({ TableName: this.deps.table, Key: loginGateKey() }));
  }

  private async write(state: LoginGateState, condition: Partial<ConstructorParameters<typeof PutCommand>[0]>) {
    await this.deps.documents.send(
      new PutCommand({
        TableName: this.deps.table,
        Item: {
          ...loginGateKey(),
          entity: 'torrent_login_gate',
          refusals: state.refusals,
          next_try_at: isoTime(state.nextTryAt),
          reason: state.reason,
          fingerprint: state.fingerprint,
        },
        ...condition,
      }),
    );
  }
}
