/**
 * Every metric the service emits, in one table: its unit, the domain it
 * belongs to, the dimension sets it is published under, what it means and
 * what to do when it moves. docs/operations.md's "Metrics" table is this
 * table (test/unit/metrics/catalog.test.ts keeps the two equal), and the
 * template's alarms and dashboard may name only metrics listed here.
 *
 * Every dimension set starts with `service`, `stage` and `domain`; `by` adds
 * the rest. Dimensions are few-valued by construction (an outcome, a state, a
 * budget, a function name): an id is never a dimension, it goes on the line
 * as a property (searchable in Logs Insights, free of metric cost).
 */

export const NAMESPACE = 'TorrentScanSync';

export type Unit = 'Milliseconds' | 'Count';
/** Dimensions a call site gives (or, for `function`, the invocation does). */
export type Dimension = 'outcome' | 'cause' | 'state' | 'budget' | 'function';
export const BASE_DIMENSIONS = ['service', 'stage', 'domain'] as const;

export interface MetricSpec {
  domain: 'scan' | 'sync' | 'downloads' | 'telegram' | 'platform';
  unit: Unit;
  /** One dimension set per entry, each after BASE_DIMENSIONS; `[]` is the base set alone. */
  by: ReadonlyArray<readonly Dimension[]>;
  /** The statistic an alarm or a chart reads. */
  statistic: 'Sum' | 'p99' | 'Maximum';
  meaning: string;
  action: string;
}

export const METRICS = {
  ScanLatency: {
    domain: 'scan',
    unit: 'Milliseconds',
    by: [[]],
    statistic: 'p99',
    meaning:
      "A scan request's arrival to its final envelope (`done`, `needs_check`, `error`) on NATS, the OCR system's own time included; one value per published envelope.",
    action:
      'Compare with ScanAnswerDelay: if that stayed low the OCR system is slow (its queue, its host); if both rose, look at the poller (`scan_poll_failed`, `scan_job_step_failed`) and the hot folder.',
  },
  ScanAnswerDelay: {
    domain: 'scan',
    unit: 'Milliseconds',
    by: [[]],
    statistic: 'p99',
    meaning:
      "The gateway's own part: its first sight of an answer set to the envelope published. Bounded by settle + one poll interval + 1 s (8 s with the defaults, docs/scan.md).",
    action:
      "Above the bound: the poller is not running or is slow (a lease stuck, `scan_poller_start_failed`, the SMB share slow to list); check the scanPoll function's errors and duration.",
  },
  ScanAnswersLate: {
    domain: 'scan',
    unit: 'Count',
    by: [[]],
    statistic: 'Sum',
    meaning:
      "Final envelopes published after the request's `reply_deadline` (1 each; 0 for one on time): the core system had already stopped waiting.",
    action:
      'Any: find the jobs (`event: "metric"` lines with `ScanAnswersLate` 1 carry `job_id`); a TIMEOUT envelope is expected late, a `done` one means the backlog or the OCR system held it too long: see ScanBacklog.',
  },
  ScanBacklog: {
    domain: 'scan',
    unit: 'Count',
    by: [[]],
    statistic: 'Maximum',
    meaning: 'Scan jobs waiting for a slot, sampled by the poller at most every 10 s while it runs.',
    action:
      'Growing while ScanInFlight sits at SCAN_MAX_INFLIGHT: the OCR system is the bottleneck (raise its capacity and the slots together); growing with free slots: the poller is not starting jobs.',
  },
  ScanInFlight: {
    domain: 'scan',
    unit: 'Count',
    by: [[]],
    statistic: 'Maximum',
    meaning: 'Slots held (files in the hot folder awaiting an answer), sampled with ScanBacklog.',
    action:
      'Stuck at SCAN_MAX_INFLIGHT with nothing finishing: answers are not being read (hot folder unreachable, Output/ not written); see `scan_poll_failed`.',
  },
  SyncAttempts: {
    domain: 'sync',
    unit: 'Count',
    by: [['outcome'], ['cause']],
    statistic: 'Sum',
    meaning:
      'Hourly attempts settled, by `outcome` (succeeded, partial, failed) and by `cause` (the first problem: INTERRUPTED, DEADLINE, TOKEN_INVALID, RATE_LIMITED, … or `none`).',
    action:
      'Read the cause: DEADLINE = steps slower than WORK_WAIT_BOUND_MS (T-Bank slow, budget waits); INTERRUPTED = a tick or settle lost (function errors, timeouts); TOKEN_INVALID = a user must reconnect; RATE_LIMITED = see TbankRateLimited.',
  },
  SyncAttemptsNotSucceeded: {
    domain: 'sync',
    unit: 'Count',
    by: [[]],
    statistic: 'Sum',
    meaning:
      'Attempts settled partial or failed (1 each, 0 for a success): the alarm "sync attempts not succeeded in the last hour".',
    action: "Above the threshold: SyncAttempts by cause says which; the console's /sync/{user} strip shows the users.",
  },
  SyncAttemptLateness: {
    domain: 'sync',
    unit: 'Milliseconds',
    by: [[]],
    statistic: 'Maximum',
    meaning:
      'How late an hourly attempt started against its hour: its start minus its due time (the previous start + 1 h). Every connection is promised a start within 62 min of the last.',
    action:
      'Above 2 min: the tick is deferring (egress budget full: `sync_tick_done` `deferred`), failing (syncTick errors) or not scheduled; grow TBANK_EGRESS_ADDRESSES (docs/deploy.md §8) or look at the tick.',
  },
  TbankRateLimited: {
    domain: 'sync',
    unit: 'Count',
    by: [[]],
    statistic: 'Sum',
    meaning: 'T-Bank answers 429 / 80002 (each waited for and retried, or ending the call RATE_LIMITED), per step.',
    action:
      'Our budget should keep this at 0: a rise means another client uses the same token or address, or the limits changed (lib/sync/rate-budget.ts TBANK_LIMITS).',
  },
  TbankBudgetWait: {
    domain: 'sync',
    unit: 'Milliseconds',
    by: [['budget']],
    statistic: 'Sum',
    meaning:
      "Time a step's calls waited for their send instant on a call schedule (docs/sync.md, pacing), per step, by `budget`: `token` (the user's per-service limits) or `egress` (the addresses' shared limit).",
    action:
      "Egress waits near the step bound: the addresses are saturated, attempts will end DEADLINE; add an egress address. Token waits: one user's history is large (expected on a first sync).",
  },
  DownloadTransitions: {
    domain: 'downloads',
    unit: 'Count',
    by: [['state']],
    statistic: 'Sum',
    meaning:
      'Downloads entering `state` (queued, downloading, paused, stuck, completed, failed, cancelled), created ones included.',
    action:
      "A rise of `stuck` or `failed`: the torrent client refuses adds or lost torrents (see TorrentLoginRefused, `torrent_add_failed`); the console's /failures lists them.",
  },
  TorrentLoginRefused: {
    domain: 'downloads',
    unit: 'Count',
    by: [['outcome']],
    statistic: 'Sum',
    meaning:
      'Logins the torrent client refused (`refused`) or answered with a ban (`banned`); each closes the login gate for 31 min and more.',
    action:
      'Any: the configured credentials are wrong or changed (TORRENT_CLIENT_PASSWORD / API key secret); fix the secret, the gate opens to one try at its next time (healthcheck `torrent_client`).',
  },
  DownloadsHeldForDisk: {
    domain: 'downloads',
    unit: 'Count',
    by: [[]],
    statistic: 'Maximum',
    meaning:
      "Downloads the disk guard holds paused because they would not fit on the client's disk beside DOWNLOAD_DISK_RESERVE; one value per poll that looked at the disk.",
    action:
      "Any for long: free space on the client's save path (delete finished downloads, or their files), or lower DOWNLOAD_DISK_RESERVE; held downloads start again by themselves at the next poll (runbook: alarm-disk-space).",
  },
  NotifierLag: {
    domain: 'telegram',
    unit: 'Milliseconds',
    by: [[]],
    statistic: 'p99',
    meaning:
      "A downloads-table stream record's age when its Telegram message was sent (the record's creation to the send's answer).",
    action:
      "Rising: the pace holds a burst (expected, minutes), Telegram answers 429 (`notification_rate_limited`), or the notifier fails and retries; compare with the stream's IteratorAge.",
  },
  NotifierSendFailures: {
    domain: 'telegram',
    unit: 'Count',
    by: [['outcome']],
    statistic: 'Sum',
    meaning:
      'Notifications not delivered, by `outcome`: `failed` (given up), `uncertain` (crashed between send and record, or its answer lost), `error` (storage), `refused` (an unreadable stream record).',
    action:
      "The console's /failures lists each with its reason and a retry; many `failed` at once: the bot token or a chat is wrong (`telegram_refused`).",
  },
  AsyncHandlerFailures: {
    domain: 'platform',
    unit: 'Count',
    by: [['function']],
    statistic: 'Sum',
    meaning:
      'An asynchronously invoked handler (schedule, async invoke, stream, NATS) threw; on AWS Lambda retries it and then sends it to the failure queue.',
    action: "The `async_handler_failed` line of the same request_id has the stack; watch the failure queue's depth.",
  },
  SecretsReadFailures: {
    domain: 'platform',
    unit: 'Count',
    by: [['function']],
    statistic: 'Sum',
    meaning: 'A secret named by the function could not be read before an invocation (the invocation failed).',
    action:
      'Secrets Manager unreachable, the secret deleted, or the role lost `secretsmanager:GetSecretValue`: the error line names the secret id, never its value.',
  },
} as const satisfies Record<string, MetricSpec>;

export type MetricName = keyof typeof METRICS;
export const METRIC_NAMES = Object.keys(METRICS) as MetricName[];

/** The dimension sets a metric is published under, each in full. */
export function dimensionSets(name: MetricName): string[][] {
  return METRICS[name].by.map((extra) => [...BASE_DIMENSIONS, ...extra]);
}
