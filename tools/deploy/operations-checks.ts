/**
 * The rules an on-call person relies on (issue 40; docs/operations.md), checked
 * on the packaged template beside template-checks.ts: every alarm notifies the
 * alarm topic and names a runbook section; the alarms the runbooks describe
 * exist; the alarms and the dashboard name only metrics some handler emits;
 * the HTTP API logs who did what and is throttled; the public functions have
 * reserved concurrency; the bearer authorizer's cache is keyed by the route
 * too; tracing is on with the roles to write it.
 */

import { Cfn, functionLogicalId, of } from './template';

export interface OperationsContext {
  /** The packaged functions by key (serverless-state.json `service.functions`). */
  functions: Record<string, unknown>;
  /** The metric names the code emits in the service's namespace (lib/metrics/catalog.ts). */
  metrics: ReadonlySet<string>;
  /** The anchors of docs/operations.md, without '#'. */
  anchors: ReadonlySet<string>;
  namespace: string;
}

export interface OperationsViolation {
  rule: 'alarms' | 'dashboard' | 'edge' | 'tracing';
  message: string;
}

/** The alarms the runbooks describe beside the per-function ones (plugins/aws-operations). */
export const REQUIRED_ALARMS = [
  'FailureQueueDepthAlarm',
  'FailureQueueAgeAlarm',
  'NotifierIteratorAgeAlarm',
  'SyncNotSucceededAlarm',
  'ScanAnswerDelayAlarm',
  'ScanAnswersLateAlarm',
  'TorrentLoginRefusedAlarm',
  'DiskSpaceAlarm',
];

/** The functions anyone on the internet can reach: they get reserved concurrency. */
export const PUBLIC_FUNCTIONS = ['authorizer', 'healthcheck', 'webSignIn', 'telegramWebhook'];

/** Every metric an alarm names: its own, or those of its metric math. */
function alarmMetrics(alarm: any): Array<{ namespace: string; name: string }> {
  const p = alarm.Properties ?? {};
  if (p.MetricName) return [{ namespace: p.Namespace, name: p.MetricName }];
  return (p.Metrics ?? [])
    .map((m: any) => m.MetricStat?.Metric)
    .filter(Boolean)
    .map((m: any) => ({ namespace: m.Namespace, name: m.MetricName }));
}

/** The metrics a dashboard's widgets name ([namespace, name, dims…] rows), read from its body. */
export function dashboardMetrics(body: unknown): Array<{ namespace: string; name: string }> {
  const text = typeof body === 'string' ? body : (body as any)?.['Fn::Sub']?.[0];
  if (typeof text !== 'string') return [];
  const parsed = JSON.parse(text) as { widgets: Array<{ properties?: { metrics?: unknown[][] } }> };
  return parsed.widgets.flatMap((w) =>
    (w.properties?.metrics ?? []).map((row) => ({ namespace: String(row[0]), name: String(row[1]) })),
  );
}

export function checkAlarms(t: Cfn, ctx: OperationsContext): OperationsViolation[] {
  const out: OperationsViolation[] = [];
  const topics = of(t, 'AWS::SNS::Topic').map(([id]) => id);
  if (topics.length !== 1) out.push({ rule: 'alarms', message: `expected one alarm topic, found ${topics.length}` });
  const alarms = Object.fromEntries(of(t, 'AWS::CloudWatch::Alarm'));
  for (const [id, alarm] of Object.entries(alarms)) {
    const p = alarm.Properties ?? {};
    const actions = JSON.stringify(p.AlarmActions ?? []);
    if (!topics.some((topic) => actions.includes(JSON.stringify({ Ref: topic }))))
      out.push({ rule: 'alarms', message: `${id} notifies no one (no AlarmActions to the alarm topic)` });
    const anchor = /docs\/operations\.md#([a-z0-9-]+)/.exec(String(p.AlarmDescription ?? ''))?.[1];
    if (!anchor) out.push({ rule: 'alarms', message: `${id} names no runbook section` });
    else if (!ctx.anchors.has(anchor))
      out.push({ rule: 'alarms', message: `${id} names runbook section #${anchor}, which docs/operations.md lacks` });
    for (const m of alarmMetrics(alarm))
      if (m.namespace === ctx.namespace && !ctx.metrics.has(m.name))
        out.push({ rule: 'alarms', message: `${id} watches ${m.name}, which no handler emits` });
  }
  for (const key of Object.keys(ctx.functions)) {
    const base = functionLogicalId(key).replace(/LambdaFunction$/, '');
    for (const kind of ['Errors', 'Throttles'])
      if (!alarms[`${base}${kind}Alarm`]) out.push({ rule: 'alarms', message: `${key} has no ${kind} alarm` });
  }
  for (const id of REQUIRED_ALARMS) if (!alarms[id]) out.push({ rule: 'alarms', message: `${id} is missing` });
  return out;
}

export function checkDashboard(t: Cfn, ctx: OperationsContext): OperationsViolation[] {
  const dashboards = of(t, 'AWS::CloudWatch::Dashboard');
  if (dashboards.length === 0) return [{ rule: 'dashboard', message: 'no dashboard' }];
  return dashboards.flatMap(([id, d]) =>
    dashboardMetrics(d.Properties?.DashboardBody)
      .filter((m) => m.namespace === ctx.namespace && !ctx.metrics.has(m.name))
      .map((m) => ({ rule: 'dashboard' as const, message: `${id} shows ${m.name}, which no handler emits` })),
  );
}

export function checkEdge(t: Cfn): OperationsViolation[] {
  const out: OperationsViolation[] = [];
  const stages = of(t, 'AWS::ApiGatewayV2::Stage');
  for (const [id, stage] of stages) {
    const settings = stage.Properties?.DefaultRouteSettings ?? {};
    if (!(settings.ThrottlingRateLimit > 0 && settings.ThrottlingBurstLimit > 0))
      out.push({ rule: 'edge', message: `${id} has no stage throttling` });
    const format = String(stage.Properties?.AccessLogSettings?.Format ?? '');
    for (const field of [
      '$context.requestId',
      '$context.authorizer.principalId',
      '$context.routeKey',
      '$context.status',
    ])
      if (!format.includes(field)) out.push({ rule: 'edge', message: `${id}'s access log lacks ${field}` });
  }
  if (stages.length === 0) out.push({ rule: 'edge', message: 'no HTTP API stage' });
  for (const key of PUBLIC_FUNCTIONS) {
    const fn = t.Resources[functionLogicalId(key)];
    if (fn && !(fn.Properties?.ReservedConcurrentExecutions > 0))
      out.push({ rule: 'edge', message: `${key} is public and has no reserved concurrency` });
  }
  for (const [id, authorizer] of of(t, 'AWS::ApiGatewayV2::Authorizer')) {
    const p = authorizer.Properties ?? {};
    // A cached decision reused on another route would grant that route's scope: the route must be in the key.
    if (p.AuthorizerResultTtlInSeconds > 0 && !(p.IdentitySource ?? []).includes('$context.routeKey'))
      out.push({ rule: 'edge', message: `${id} caches decisions without the route in its key` });
  }
  return out;
}

export function checkTracing(t: Cfn): OperationsViolation[] {
  const out: OperationsViolation[] = [];
  for (const [id, fn] of of(t, 'AWS::Lambda::Function')) {
    if (fn.Properties?.TracingConfig?.Mode !== 'Active') continue;
    const roleId = fn.Properties?.Role?.['Fn::GetAtt']?.[0];
    const text = JSON.stringify(t.Resources[roleId]?.Properties?.Policies ?? []);
    if (!text.includes('xray:PutTraceSegments'))
      out.push({ rule: 'tracing', message: `${id} is traced but its role cannot write to X-Ray` });
  }
  return out;
}

export function checkOperations(t: Cfn, ctx: OperationsContext): OperationsViolation[] {
  return [...checkAlarms(t, ctx), ...checkDashboard(t, ctx), ...checkEdge(t), ...checkTracing(t)];
}
