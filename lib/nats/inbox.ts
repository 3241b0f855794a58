/**
 * Inbox subjects: where a NATS requester waits for its answer. The NATS
 * clients make them `<prefix>.<unique token>[.<token>]`, the prefix `_INBOX`
 * unless the connection was given another (`inboxPrefix`; ours is
 * `NATS_INBOX_PREFIX`). A function that answers a request publishes only on
 * such a subject: a reply subject is the sender's choice, and answering on
 * any of them would let a sender publish our answer (with its own data in
 * it) onto `scan.results` or any subject the service may publish to.
 */
export const DEFAULT_INBOX_PREFIX = '_INBOX';

const TOKENS = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

/** Whether `subject` is an inbox under `_INBOX` or the configured prefix, with at least one token after it. */
export function isInboxSubject(subject: string, configuredPrefix?: string): boolean {
  const prefixes = [DEFAULT_INBOX_PREFIX, ...(configuredPrefix ? [configuredPrefix] : [])];
  return prefixes.some(
    (prefix) =>
      subject.length <= 256 && subject.startsWith(`${prefix}.`) && TOKENS.test(subject.slice(prefix.length + 1)),
  );
}
