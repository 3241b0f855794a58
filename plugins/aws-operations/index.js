// @ts-check
'use strict';
/**
 * What an on-call person needs from a deployed stage, written into the
 * template on the aws target (docs/operations.md): one SNS topic every alarm
 * notifies (its subscribers a deploy setting), the alarms of the runbooks,
 * a dashboard of the same figures, the HTTP API's stage throttling, reserved
 * concurrency on the public functions, and the bearer authorizer's result
 * cache keyed by token and route. The local target gets none of it: serverless
 * offline has no CloudWatch, and the local console shows the same metrics
 * (docs/console.md).
 *
 * The decisions are pure functions (`operationsResources`, `alarmsOf`, …)
 * that test/unit/deploy tests directly; the plugin only applies them.
 */

/**
 * @typedef {{
 *   namespace: string,
 *   alarmEmails?: string,
 *   thresholds: Record<string, string | number>,
 *   errorThresholds?: Record<string, string | number>,
 *   reservedConcurrency?: Record<string, string | number>,
 *   throttle?: { rate?: string | number, burst?: string | number },
 *   authorizerCacheSeconds?: string | number,
 * }} Operations
 * @typedef {{ key: string, logicalId: string, name: string }} Fn
 */

const TOPIC = 'AlarmTopic';
const RUNBOOK = 'docs/operations.md';

/** A deploy setting read as a whole number; `fallback` when empty. @param {unknown} value @param {number} fallback */
function count(value, fallback) {
  const text = String(value ?? '').trim();
  if (!text) return fallback;
  if (!/^\d{1,9}$/.test(text)) throw new Error(`expected a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

/**
 * One alarm: its metric (or metric math), its threshold, the topic, and the runbook anchor in its description.
 * @param {{ id: string, what: string, anchor: string, threshold: number, periodS: number, evaluations?: number, metric: Record<string, unknown> }} a
 */
function alarm(a) {
  return [
    a.id,
    {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: {
        AlarmDescription: `${a.what} Runbook: ${RUNBOOK}#${a.anchor}`,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: a.threshold,
        EvaluationPeriods: a.evaluations ?? 1,
        // No data is no failure: a quiet hour must not page anyone.
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: TOPIC }],
        OKActions: [{ Ref: TOPIC }],
        ...a.metric,
        ...('Metrics' in a.metric ? {} : { Period: a.periodS }),
      },
    },
  ];
}

/** @param {string} namespace @param {string} name @param {Array<{Name: string, Value: unknown}>} dimensions @param {string} stat */
const metric = (namespace, name, dimensions, stat) => ({
  Namespace: namespace,
  MetricName: name,
  Dimensions: dimensions,
  ...(/^p\d/.test(stat) ? { ExtendedStatistic: stat } : { Statistic: stat }),
});

/**
 * Every alarm of the stage (docs/operations.md "Runbooks").
 * @param {{ operations: Operations, functions: Fn[], service: string, stage: string, queue: string, notifier?: Fn }} input
 */
function alarmsOf({ operations, functions, service, stage, queue, notifier }) {
  const t = operations.thresholds;
  const ours = (/** @type {string} */ domain, /** @type {Record<string, string>} */ extra = {}) =>
    [
      { Name: 'service', Value: service },
      { Name: 'stage', Value: stage },
      { Name: 'domain', Value: domain },
    ].concat(Object.entries(extra).map(([Name, Value]) => ({ Name, Value })));
  const ns = operations.namespace;
  const out = [];
  for (const fn of functions) {
    const dims = [{ Name: 'FunctionName', Value: { Ref: fn.logicalId } }];
    out.push(
      alarm({
        id: `${fn.logicalId.replace(/LambdaFunction$/, '')}ErrorsAlarm`,
        what: `${fn.name}: invocations ended in an error.`,
        anchor: 'alarm-function-errors',
        threshold: count(operations.errorThresholds?.[fn.key], 1),
        periodS: 300,
        metric: metric('AWS/Lambda', 'Errors', dims, 'Sum'),
      }),
      alarm({
        id: `${fn.logicalId.replace(/LambdaFunction$/, '')}ThrottlesAlarm`,
        what: `${fn.name}: invocations were throttled.`,
        anchor: 'alarm-function-throttles',
        threshold: 1,
        periodS: 300,
        metric: metric('AWS/Lambda', 'Throttles', dims, 'Sum'),
      }),
    );
  }
  const queueDims = [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue, 'QueueName'] } }];
  out.push(
    alarm({
      id: 'FailureQueueDepthAlarm',
      what: 'Asynchronous invocations failed after their retries and wait in the failure queue.',
      anchor: 'alarm-failure-queue-depth',
      threshold: 1,
      periodS: 300,
      metric: metric('AWS/SQS', 'ApproximateNumberOfMessagesVisible', queueDims, 'Maximum'),
    }),
    alarm({
      id: 'FailureQueueAgeAlarm',
      what: 'A failed invocation has waited in the failure queue unattended (it is dropped after 14 days).',
      anchor: 'alarm-failure-queue-age',
      threshold: count(t.failureAgeSeconds, 86400),
      periodS: 300,
      metric: metric('AWS/SQS', 'ApproximateAgeOfOldestMessage', queueDims, 'Maximum'),
    }),
    alarm({
      id: 'SyncNotSucceededAlarm',
      what: 'Hourly sync attempts ended partial or failed in the last hour.',
      anchor: 'alarm-sync-not-succeeded',
      threshold: count(t.syncNotSucceededPerHour, 5),
      periodS: 3600,
      metric: metric(ns, 'SyncAttemptsNotSucceeded', ours('sync'), 'Sum'),
    }),
    alarm({
      id: 'ScanAnswerDelayAlarm',
      what: "The gateway's p99 from an answer set seen to its envelope published is above the protocol's bound.",
      anchor: 'alarm-scan-latency',
      threshold: count(t.scanAnswerDelayMs, 8000),
      periodS: 300,
      metric: metric(ns, 'ScanAnswerDelay', ours('scan'), 'p99'),
    }),
    alarm({
      id: 'ScanAnswersLateAlarm',
      what: "Final scan envelopes were published after the request's reply deadline.",
      anchor: 'alarm-scan-latency',
      threshold: 1,
      periodS: 300,
      metric: metric(ns, 'ScanAnswersLate', ours('scan'), 'Sum'),
    }),
    alarm({
      id: 'TorrentLoginRefusedAlarm',
      what: 'The torrent client refused our login (or banned us): downloads cannot reach it.',
      anchor: 'alarm-torrent-client-refusals',
      threshold: 1,
      periodS: 300,
      metric: {
        Metrics: [
          { Id: 'refusals', Expression: 'refused + banned', Label: 'logins refused or banned', ReturnData: true },
          ...['refused', 'banned'].map((outcome) => ({
            Id: outcome,
            ReturnData: false,
            MetricStat: {
              Metric: { Namespace: ns, MetricName: 'TorrentLoginRefused', Dimensions: ours('downloads', { outcome }) },
              Period: 300,
              Stat: 'Sum',
            },
          })),
        ],
      },
    }),
    alarm({
      id: 'DiskSpaceAlarm',
      what: "Downloads are paused because the torrent client's disk is short of space (beside DOWNLOAD_DISK_RESERVE).",
      anchor: 'alarm-disk-space',
      threshold: 1,
      periodS: 900,
      metric: metric(ns, 'DownloadsHeldForDisk', ours('downloads'), 'Maximum'),
    }),
  );
  if (notifier)
    out.push(
      alarm({
        id: 'NotifierIteratorAgeAlarm',
        what: "The Telegram notifier is behind the downloads table's stream (records expire after 24 h).",
        anchor: 'alarm-stream-iterator-age',
        threshold: count(t.iteratorAgeMs, 3600000),
        periodS: 300,
        metric: metric(
          'AWS/Lambda',
          'IteratorAge',
          [{ Name: 'FunctionName', Value: { Ref: notifier.logicalId } }],
          'Maximum',
        ),
      }),
    );
  return Object.fromEntries(out);
}

/**
 * The dashboard: the alarms' figures and the domain metrics beside them.
 * @param {{ operations: Operations, functions: Fn[], service: string, stage: string, queue: string, region: string }} input
 */
function dashboardOf({ operations, functions, service, stage, queue, region }) {
  const ns = operations.namespace;
  const base = (/** @type {string} */ domain) => ['service', service, 'stage', stage, 'domain', domain];
  /** @param {string} title @param {unknown[][]} metrics @param {Record<string, unknown>} [extra] */
  const widget = (title, metrics, extra = {}) => ({
    type: 'metric',
    width: 12,
    height: 6,
    properties: { title, region, view: 'timeSeries', stacked: false, period: 300, metrics, ...extra },
  });
  const perFunction = (/** @type {string} */ name) =>
    functions.map((fn) => ['AWS/Lambda', name, 'FunctionName', { Ref: fn.logicalId }, { stat: 'Sum' }]);
  const widgets = [
    widget('Function errors', perFunction('Errors')),
    widget('Function throttles', perFunction('Throttles')),
    widget('Failure queue', [
      ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', { 'Fn::GetAtt': [queue, 'QueueName'] }],
      [
        'AWS/SQS',
        'ApproximateAgeOfOldestMessage',
        'QueueName',
        { 'Fn::GetAtt': [queue, 'QueueName'] },
        { yAxis: 'right' },
      ],
    ]),
    widget(
      'Sync attempts by outcome (hourly)',
      [
        ...['succeeded', 'partial', 'failed'].map((outcome) => [
          ns,
          'SyncAttempts',
          ...base('sync'),
          'outcome',
          outcome,
        ]),
        [ns, 'SyncAttemptsNotSucceeded', ...base('sync')],
      ],
      { period: 3600, stat: 'Sum' },
    ),
    widget('Sync lateness and T-Bank 429s', [
      [ns, 'SyncAttemptLateness', ...base('sync'), { stat: 'Maximum' }],
      [ns, 'TbankRateLimited', ...base('sync'), { stat: 'Sum', yAxis: 'right' }],
    ]),
    widget('Scan latency (p99)', [
      [ns, 'ScanLatency', ...base('scan'), { stat: 'p99' }],
      [ns, 'ScanAnswerDelay', ...base('scan'), { stat: 'p99' }],
    ]),
    widget('Scan backlog, slots, late answers', [
      [ns, 'ScanBacklog', ...base('scan'), { stat: 'Maximum' }],
      [ns, 'ScanInFlight', ...base('scan'), { stat: 'Maximum' }],
      [ns, 'ScanAnswersLate', ...base('scan'), { stat: 'Sum', yAxis: 'right' }],
    ]),
    widget('Notifier lag (p99) and failures', [
      [ns, 'NotifierLag', ...base('telegram'), { stat: 'p99' }],
      ...['failed', 'uncertain'].map((outcome) => [
        ns,
        'NotifierSendFailures',
        ...base('telegram'),
        'outcome',
        outcome,
        { stat: 'Sum', yAxis: 'right' },
      ]),
    ]),
    widget('Downloads and the torrent client', [
      ...['stuck', 'failed', 'completed'].map((state) => [
        ns,
        'DownloadTransitions',
        ...base('downloads'),
        'state',
        state,
        { stat: 'Sum' },
      ]),
      ...['refused', 'banned'].map((outcome) => [
        ns,
        'TorrentLoginRefused',
        ...base('downloads'),
        'outcome',
        outcome,
        { stat: 'Sum', yAxis: 'right' },
      ]),
      [ns, 'DownloadsHeldForDisk', ...base('downloads'), { stat: 'Maximum', yAxis: 'right' }],
    ]),
  ];
  // CloudFormation takes the body as a string; Fn::Sub keeps the Refs inside it live.
  const refs = new Map();
  const body = JSON.stringify({ widgets }, (_k, v) => {
    if (v && typeof v === 'object' && !Array.isArray(v) && ('Ref' in v || 'Fn::GetAtt' in v)) {
      const name = `ref${refs.size}`;
      refs.set(name, v);
      return `\${${name}}`;
    }
    return v;
  });
  return {
    Type: 'AWS::CloudWatch::Dashboard',
    Properties: {
      DashboardName: `${service}-${stage}`,
      DashboardBody: { 'Fn::Sub': [body, Object.fromEntries(refs)] },
    },
  };
}

/** The topic and one email subscription per address of the deploy setting. @param {string | undefined} emails */
function topicOf(emails) {
  // `none`: no address; the operator subscribes the topic (plugins/aws-access refuses an empty one on a kept stage).
  const text = String(emails ?? '').trim();
  const addresses = (text === 'none' ? '' : text)
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  for (const address of addresses)
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(address))
      throw new Error(`ALARM_EMAILS: ${JSON.stringify(address)} is not an email address`);
  return {
    [TOPIC]: {
      Type: 'AWS::SNS::Topic',
      // AWS's own key for SNS: the alarms' texts are not secret, but nothing leaves unencrypted at rest.
      Properties: { KmsMasterKeyId: 'alias/aws/sns' },
    },
    ...Object.fromEntries(
      addresses.map((address, i) => [
        `AlarmSubscription${i + 1}`,
        {
          Type: 'AWS::SNS::Subscription',
          Properties: { TopicArn: { Ref: TOPIC }, Protocol: 'email', Endpoint: address },
        },
      ]),
    ),
  };
}

class AwsOperations {
  /** @param {any} serverless */
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      initialize: () => this.configure(),
      'before:aws:package:finalize:saveServiceState': () => this.write(),
    };
  }

  get active() {
    return String(this.serverless.service.custom?.target ?? 'aws') === 'aws';
  }

  /** @returns {Operations} */
  get operations() {
    return this.serverless.service.custom.operations;
  }

  /** Reserved concurrency and the authorizer's cache, before the functions compile. */
  configure() {
    if (!this.active) return;
    const service = this.serverless.service;
    for (const [key, value] of Object.entries(this.operations.reservedConcurrency ?? {})) {
      const fn = service.getFunction(key);
      const n = count(value, 0);
      if (n > 0) fn.reservedConcurrency = n;
    }
    // The bearer decision depends on the token and the route (lib/auth/scopes.ts): cached by both, never by token alone.
    const ttl = count(this.operations.authorizerCacheSeconds, 0);
    const bearer = service.provider.httpApi?.authorizers?.bearer;
    if (bearer && ttl > 0) {
      bearer.identitySource = ['$request.header.Authorization', '$context.routeKey'];
      bearer.resultTtlInSeconds = ttl;
    }
  }

  write() {
    if (!this.active) return;
    const provider = this.serverless.getProvider('aws');
    const service = this.serverless.service;
    const resources = service.provider.compiledCloudFormationTemplate.Resources;
    const functions = service.getAllFunctions().map((/** @type {string} */ key) => ({
      key,
      logicalId: provider.naming.getLambdaLogicalId(key),
      name: service.getFunction(key).name,
    }));
    const input = {
      operations: this.operations,
      functions,
      service: service.service,
      stage: provider.getStage(),
      queue: 'AsyncFailuresQueue',
      region: provider.getRegion(),
      notifier: functions.find((/** @type {Fn} */ f) => f.key === 'telegramNotify'),
    };
    Object.assign(resources, topicOf(this.operations.alarmEmails), alarmsOf(input), {
      Dashboard: dashboardOf(input),
    });
    const stage = resources[provider.naming.getHttpApiStageLogicalId()];
    if (stage)
      stage.Properties.DefaultRouteSettings = {
        ...stage.Properties.DefaultRouteSettings,
        ThrottlingRateLimit: count(this.operations.throttle?.rate, 50),
        ThrottlingBurstLimit: count(this.operations.throttle?.burst, 100),
      };
  }
}

module.exports = AwsOperations;
module.exports.alarmsOf = alarmsOf;
module.exports.dashboardOf = dashboardOf;
module.exports.topicOf = topicOf;
