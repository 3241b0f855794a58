import { awsClients } from '../../lib/aws/clients';
import { config } from '../../lib/config';
import { downloadsLog } from '../../lib/downloads/wiring';
import { DynamoIdempotencyStore } from '../../lib/idempotency/dynamodb-store';
import type { IdempotencyDeps } from '../../lib/idempotency/service';

/** What the downloads API adds to the domain's wiring (lib/downloads/wiring.ts), built once per container. */

export const log = downloadsLog;

let idempotency: IdempotencyDeps | undefined;

/** Idempotency records of POST /downloads live in the downloads table (lib/idempotency/keys.ts). */
export function idempotencyDeps(): IdempotencyDeps {
  if (!idempotency) {
    const cfg = config();
    idempotency = {
      store: new DynamoIdempotencyStore({ documents: awsClients(cfg).documents, table: cfg.tables.downloads }),
      log,
    };
  }
  return idempotency;
}
