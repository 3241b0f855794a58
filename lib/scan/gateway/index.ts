/**
 * The scan gateway's public API: `handleRequest` for each NATS request (intake),
 * `pollOnce` / `pollRun` / `pollUntil` for the poller (loop). The stages behind
 * it, one job per file, each over the ones beneath it and never back:
 *
 *   ports.ts    GatewayDeps; the one way any stage publishes an envelope
 *   answers.ts  a submitted job's answer set: settle, merge, raw to S3, normalise; finish and publish
 *   submit.ts   a job's input from S3 into Input/ (request path, or a queued job into a freed slot)
 *   intake.ts   a NATS request: parse, ack, record, submit (or refuse)
 *   loop.ts     the poller's passes over the jobs in work
 *
 * Everything that must survive an invocation is on the job item; every
 * transition is a CAS. lib/scan/README.md names the rules.
 */

export type { GatewayDeps } from './ports';
export { handleRequest, PAYLOAD_CONFLICTS, requestHash, type RequestOutcome } from './intake';
export { pollOnce, pollRun, pollUntil, type PollRun, type PollSummary } from './loop';
