import { InvalidNatsEventError } from './errors';
/**
 * `nats` events as declared on functions in serverless.yml:
 *
 *   events:
 *     - nats: { subject: scan.requests, queue: scan-gateway }
 *
 * A queue group makes a subject's messages go to ONE subscriber of the group,
 * so several bridges (or a bridge per region) never invoke twice.
 */

export interface NatsRoute {
  /** The deployed Lambda function name (service-stage-key). */
  functionName: string;
  subject: string;
  queue?: string;
}

export type FunctionDefs = Record<string, { name?: string; events?: Array<Record<string, unknown>> }>;

// Dot-separated tokens, none empty, no white space (wildcards allowed).
const SUBJECT = /^[^\s.]+(\.[^\s.]+)*$/;

export function natsRoutes(functions: FunctionDefs): NatsRoute[] {
  const routes: NatsRoute[] = [];
  for (const [key, def] of Object.entries(functions)) {
    for (const event of def.events ?? []) {
      if (!('nats' in event)) continue;
      const nats = event.nats as { subject?: unknown; queue?: unknown } | null;
      if (!nats || typeof nats.subject !== 'string' || !SUBJECT.test(nats.subject)) {
        throw new InvalidNatsEventError(
          `function ${key}: nats event needs a subject of dot-separated tokens without spaces`,
        );
      }
      if (nats.queue !== undefined && (typeof nats.queue !== 'string' || /\s/.test(nats.queue))) {
        throw new InvalidNatsEventError(`function ${key}: nats queue must be a name without spaces`);
      }
      if (!def.name) throw new InvalidNatsEventError(`function ${key}: has no resolved name`);
      routes.push({ functionName: def.name, subject: nats.subject, queue: nats.queue as string | undefined });
    }
  }
  return routes;
}
