import type { Html } from '../html';
import type { JobPhase } from '../console-phases';

/** The metrics panels' figures (lib/web/console-metrics.ts). */
export type FigureKey =
  | 'scanLatency'
  | 'answerDelay'
  | 'late'
  | 'backlog'
  | 'inflight'
  | 'notSucceeded'
  | 'settled'
  | 'lateness'
  | 'rateLimited'
  | 'egressWait'
  | 'tokenWait'
  | 'notifierLag'
  | 'notDelivered'
  | 'asyncFailed'
  | 'loginRefused';

/** The operator console's messages (lib/web/console*.ts, charts.ts), one catalogue per language; see ui.ts. */
export interface ConsoleMessages {
  unit: { ms: string; s: string; min: string; h: string };
  chart: {
    /** `per`: one bucket is an hour or 5 minutes; `upper`: the tick's percentile. */
    quantileSummary: (p: { title: string; per: 'hour' | 'five'; upper: 90 | 99; highest: string }) => string;
    countSummary: (p: { title: string; per: 'hour' | 'five'; top: number }) => string;
    none: (p: { title: string }) => string;
    caption: (p: { title: string; per: 'hour' | 'five' }) => string;
    bucket: { hour: string; five: string };
    count: string;
    median: string;
  };
  phase: Record<JobPhase, string>;
  phaseSpan: { created: string; submitted: string; answered: string; published: string };
  scanJobs: string;
  scanIntro: (p: { hours: number; jobs: number; more: boolean }) => string;
  slots: (p: { inUse: number; max: number }) => Html;
  jobsByPhase: string;
  phaseTimes: (p: { zone: string }) => string;
  prefix: string;
  prefixPlaceholder: string;
  phaseLabel: string;
  allPhases: string;
  filter: string;
  noJobMatches: string;
  noJobs: string;
  scanCaption: string;
  scanCol: { job: string; phase: string; error: string; attempt: string; requested: string; total: string };
  scanJob: (p: { id: string }) => string;
  scanJobHeading: (p: { id: Html }) => Html;
  allScanJobs: string;
  details: string;
  file: string;
  inputObject: string;
  inboxName: string;
  deadline: string;
  phases: string;
  timeline: { requested: string; inInput: string; answered: string; settled: string; published: string };
  envelope: string;
  status: string;
  none: string;
  documents: string;
  warnings: string;
  rawAnswer: string;
  downloadRaw: string;
  noneStored: string;
  notFinished: string;
  outcome: Record<'running' | 'succeeded' | 'partial' | 'failed' | 'queued', string>;
  neverRan: string;
  hourlySync: string;
  syncIntro: string;
  noConnections: string;
  usersCaption: string;
  syncCol: { user: string; latest: string; code: string; started: string };
  stripNone: (p: { hour: string }) => string;
  stripCell: (p: { hour: string; outcome: string; code?: string }) => string;
  stripLabel: string;
  stripLegend: string;
  syncOf: (p: { user: string }) => string;
  syncOfHeading: (p: { user: Html }) => Html;
  allUsers: string;
  hourlyAttempts: string;
  attemptHeading: (p: { id: Html }) => Html;
  attemptTimes: (p: { started: Html; finished?: Html }) => Html;
  sectionsCaption: string;
  stepCol: { section: string; result: string; code: string; step: string; tracking: string };
  stepState: Record<'succeeded' | 'failed' | 'running' | 'not-sent', string>;
  noRow: string;
  noAttempt: string;
  /** A connection waiting for its first sync: its place and the tick expected to start it (decision 365). */
  firstSyncQueued: (p: { position: number; at: Html }) => Html;
  firstSyncQueuedWhy: (p: { perMinute: string }) => string;
  budget: string;
  noCalls: string;
  budgetCaption: string;
  budgetCol: { window: string; service: string; calls: string };
  callsOf: (p: { service: string; limit: number }) => string;
  retriedAt: (p: { at: Html }) => Html;
  retryClaimed: (p: { at: Html }) => Html;
  retryLabel: (p: { kind: string; chat: string }) => string;
  failures: string;
  sentAgain: (p: { id: string }) => string;
  givenUp: string;
  failuresCaption: string;
  failCol: { what: string; reason: string; action: string };
  failureWhat: (p: { kind: string; chat: string; download?: string }) => Html;
  needDecision: string;
  updatedAt: (p: { at: Html }) => Html;
  metrics: {
    heading: string;
    local: (p: { namespace: string; window: string }) => Html;
    aws: (p: { namespace: string }) => Html;
    scanWindow: (p: { zone: string }) => string;
    syncWindow: (p: { zone: string }) => string;
    failuresWindow: (p: { zone: string }) => string;
    noData: string;
    above: (p: { value: string }) => string;
    window: (p: { hours?: number; minutes?: number }) => string;
    figure: Record<FigureKey, string>;
    requestToEnvelope: string;
    answerToEnvelope: string;
    attemptsPerHour: (p: { zone: string }) => string;
    notifierLag: string;
    causes: string;
    noCauses: string;
    byDimension: string;
    col: { metric: string; by: string };
    row: Record<'notDelivered' | 'loginRefused' | 'asyncFailed' | 'secrets' | 'transitions', string>;
  };
}
