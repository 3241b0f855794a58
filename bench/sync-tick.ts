import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { planResources } from '../tools/stack/resources';
import { newId } from '../lib/ident';
import { silentLogger } from '../lib/log';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../lib/secrets/sealer';
import { ConnectionService } from '../lib/sync/connections';
import { DynamoSyncStore } from '../lib/sync/dynamodb-store';
import { HourlyService } from '../lib/sync/service';
import { tick } from '../lib/sync/tick';
import { BenchStack } from './support';

const keyring = new SecretSealer(parseKeyring(newKeyringEntry('bench')).keyring!);
const sealer = () => keyring;

/**
 * One tick over N connections: wall time and DynamoDB calls per connection,
 * for the tick that reserves and walks (dispatch is a no-op: the steps' own
 * cost is theirs) and for the next, steady tick (every attempt running: skip).
 * Each N gets a fresh table built from the template's SyncTable.
 */
export async function syncTick(bench: BenchStack, sizes = [1, 100, 1000]) {
  const { dynamodb, documents } = bench.aws;
  let calls = 0;
  dynamodb.middlewareStack.add((next) => async (args) => (calls++, next(args)), {
    step: 'initialize',
    name: 'benchCountCalls',
  });
  const template = planResources(bench.stack.definition.resources.Resources).tables.find(
    (t) => t.logicalId === 'SyncTable',
  )!;

  const rows = [];
  for (const n of sizes) {
    const TableName = `${template.create.TableName}-bench-${n}`;
    await dynamodb.send(new CreateTableCommand({ ...template.create, TableName }));
    try {
      const store = new DynamoSyncStore({ documents, table: TableName });
      const hourly = new HourlyService({ store, waitBoundMs: 15 * 60 * 1000 });
      const connections = new ConnectionService({ store, sealer });
      for (let i = 0; i < n; i += 25) {
        await Promise.all(
          Array.from({ length: Math.min(25, n - i) }, () =>
            connections.putConnection(newId(), 'tok_benchbench1', Date.now()),
          ),
        );
      }
      const measure = async () => {
        calls = 0;
        const began = process.hrtime.bigint();
        await tick({
          hourly,
          connections,
          dispatch: async () => undefined,
          now: Date.now,
          log: silentLogger,
          run: { run_id: newId(), run_deadline: Date.now() + 55_000 },
        });
        return { ms: Number(process.hrtime.bigint() - began) / 1e6, calls };
      };
      const reserving = await measure();
      const steady = await measure();
      rows.push({ n, reserving, steady });
    } finally {
      await dynamodb.send(new DeleteTableCommand({ TableName }));
    }
  }
  return rows;
}

export function reportSyncTick(rows: Awaited<ReturnType<typeof syncTick>>): void {
  process.stdout.write('\nSync: one tick over N connections (DynamoDB Local; dispatch is a no-op)\n');
  const base = rows[0].reserving.ms / rows[0].n;
  for (const { n, reserving, steady } of rows) {
    process.stdout.write(
      `  N=${String(n).padEnd(5)} reserving tick ${reserving.ms.toFixed(0).padStart(7)} ms  ${(reserving.ms / n).toFixed(1).padStart(6)} ms/conn (x${(reserving.ms / n / base).toFixed(2)} of N=1)  ${(reserving.calls / n).toFixed(1)} calls/conn` +
        `   steady tick ${(steady.ms / n).toFixed(1).padStart(6)} ms/conn  ${(steady.calls / n).toFixed(1)} calls/conn\n`,
    );
  }
}
