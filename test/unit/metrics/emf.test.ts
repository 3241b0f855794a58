import { invocationScope, runInvocation } from '../../../lib/log';
import {
  emitMetric,
  emitMetrics,
  METRIC_NAMES,
  metricsActive,
  metricsOutput,
  NAMESPACE,
  type MetricName,
} from '../../../lib/metrics';
import { dimensionSets, METRICS } from '../../../lib/metrics/catalog';
import { emfRecord, parseEmfLine } from '../../../lib/metrics/emf';

/** A parsed JSON line, walked freely in assertions. */
type Json = ReturnType<typeof JSON.parse>;

/**
 * The EMF writer: each line must be what CloudWatch extracts metrics from
 * (the specification's `_aws.CloudWatchMetrics[].Namespace/Dimensions/Metrics`,
 * every metric's value and every dimension's value as a member of the line).
 */

function captured(body: () => void | Promise<void>): Promise<Array<Json>> {
  const lines: string[] = [];
  const write = metricsOutput.write;
  const now = metricsOutput.now;
  metricsOutput.write = (l) => lines.push(l);
  metricsOutput.now = () => Date.UTC(2026, 11, 6, 3, 0, 0);
  return Promise.resolve(body())
    .finally(() => {
      metricsOutput.write = write;
      metricsOutput.now = now;
    })
    .then(() => lines.map((l) => JSON.parse(l)));
}

/** What CloudWatch checks of a line, asserted: the directive, the units, the values, the dimensions' values. */
function expectValidEmf(line: Json) {
  const aws = line._aws;
  expect(typeof aws.Timestamp).toBe('number');
  expect(aws.CloudWatchMetrics.length).toBeGreaterThan(0);
  for (const directive of aws.CloudWatchMetrics) {
    expect(directive.Namespace).toBe(NAMESPACE);
    expect(directive.Dimensions.length).toBeGreaterThan(0);
    for (const set of directive.Dimensions) {
      expect(set.length).toBeLessThanOrEqual(30);
      for (const d of set) expect(typeof line[d] === 'string' && line[d].length > 0).toBe(true);
    }
    for (const m of directive.Metrics) {
      expect(['Milliseconds', 'Count']).toContain(m.Unit);
      expect(typeof line[m.Name]).toBe('number');
    }
  }
}

const saved = { SERVICE_NAME: process.env.SERVICE_NAME, STAGE: process.env.STAGE };
beforeAll(() => {
  process.env.SERVICE_NAME = 'torrent-scan-sync';
  process.env.STAGE = 'test';
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});

describe('emitMetrics', () => {
  it('writes one EMF line inside an invocation: namespace, dimension sets, metrics, values, ids as properties', async () => {
    const handler = invocationScope(async () =>
      emitMetrics({ ScanLatency: 2790.4, ScanAnswersLate: 0 }, {}, { job_id: '3f2a0000-0000-4000-8000-000000000001' }),
    );
    const [line] = await captured(() => handler({}, { awsRequestId: 'req-1', functionName: 'tss-test-scanPoll' }));
    expectValidEmf(line);
    expect(line._aws).toEqual({
      Timestamp: Date.UTC(2026, 11, 6, 3, 0, 0),
      CloudWatchMetrics: [
        {
          Namespace: 'TorrentScanSync',
          Dimensions: [['service', 'stage', 'domain']],
          Metrics: [
            { Name: 'ScanLatency', Unit: 'Milliseconds' },
            { Name: 'ScanAnswersLate', Unit: 'Count' },
          ],
        },
      ],
    });
    expect(line).toMatchObject({
      service: 'torrent-scan-sync',
      stage: 'test',
      domain: 'scan',
      ScanLatency: 2790,
      ScanAnswersLate: 0,
      event: 'metric',
      request_id: 'req-1',
      function: 'tss-test-scanPoll',
      cold_start: true,
      job_id: '3f2a0000-0000-4000-8000-000000000001',
    });
    expect(parseEmfLine(JSON.stringify(line))).toEqual([
      expect.objectContaining({
        name: 'ScanLatency',
        value: 2790,
        dimensions: { service: 'torrent-scan-sync', stage: 'test', domain: 'scan' },
      }),
      expect.objectContaining({ name: 'ScanAnswersLate', value: 0 }),
    ]);
  });

  it('publishes a metric under each of its dimension sets, the function filled in by the invocation', async () => {
    const lines = await captured(() =>
      runInvocation({ function: 'tss-test-syncStep', cold_start: false }, () => {
        emitMetrics({ SyncAttempts: 1, SyncAttemptsNotSucceeded: 1 }, { outcome: 'partial', cause: 'DEADLINE' });
        emitMetric('AsyncHandlerFailures', 1);
        emitMetric('TbankBudgetWait', 120, { budget: 'egress' });
      }),
    );
    lines.forEach(expectValidEmf);
    expect(lines[0]._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'TorrentScanSync',
        Dimensions: [
          ['service', 'stage', 'domain', 'outcome'],
          ['service', 'stage', 'domain', 'cause'],
        ],
        Metrics: [{ Name: 'SyncAttempts', Unit: 'Count' }],
      },
      {
        Namespace: 'TorrentScanSync',
        Dimensions: [['service', 'stage', 'domain']],
        Metrics: [{ Name: 'SyncAttemptsNotSucceeded', Unit: 'Count' }],
      },
    ]);
    expect(lines[0]).toMatchObject({ domain: 'sync', outcome: 'partial', cause: 'DEADLINE' });
    expect(lines[1]).toMatchObject({ domain: 'platform', function: 'tss-test-syncStep', AsyncHandlerFailures: 1 });
    expect(lines[1]._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'stage', 'domain', 'function']]);
    expect(lines[2]).toMatchObject({ budget: 'egress', TbankBudgetWait: 120 });
  });

  it('splits values of two domains into two lines; a missing dimension becomes "unknown", never a rejected line', async () => {
    const lines = await captured(() =>
      runInvocation({ cold_start: false }, () => emitMetrics({ NotifierLag: 1500, DownloadTransitions: 1 })),
    );
    expect(lines.map((l) => l.domain)).toEqual(['telegram', 'downloads']);
    lines.forEach(expectValidEmf);
    expect(lines[1].state).toBe('unknown');
  });

  it('writes nothing outside an invocation, drops what is not a finite number, and never throws', async () => {
    expect(metricsActive()).toBe(false);
    expect(await captured(() => emitMetric('ScanBacklog', 3))).toEqual([]);
    const lines = await captured(() =>
      runInvocation({ cold_start: false }, () => {
        expect(metricsActive()).toBe(true);
        emitMetrics({ ScanBacklog: Number.NaN, ScanInFlight: undefined });
        emitMetrics({ NotAMetric: 1 } as unknown as Record<MetricName, number>);
        emitMetric('ScanLatency', -5); // two clocks: never a negative duration
      }),
    );
    expect(lines).toHaveLength(1);
    expect(lines[0].ScanLatency).toBe(0);
    const write = metricsOutput.write;
    metricsOutput.write = () => {
      throw new Error('stdout closed');
    };
    try {
      expect(() => runInvocation({ cold_start: false }, () => emitMetric('ScanBacklog', 1))).not.toThrow();
    } finally {
      metricsOutput.write = write;
    }
  });

  it('every metric of the catalog makes a valid line', () => {
    for (const name of METRIC_NAMES) {
      const record = emfRecord(
        { [name]: 1 },
        { outcome: 'x', cause: 'y', state: 'z', budget: 'b', function: 'f' },
        {},
        0,
      );
      expectValidEmf(JSON.parse(JSON.stringify(record)));
      expect(record!._aws.CloudWatchMetrics[0].Dimensions).toEqual(dimensionSets(name));
      expect(record!._aws.CloudWatchMetrics[0].Metrics).toEqual([{ Name: name, Unit: METRICS[name].unit }]);
    }
  });
});

describe('parseEmfLine', () => {
  it('reads the points of our namespace, after a runtime prefix, and nothing of other lines', () => {
    const line = JSON.stringify(emfRecord({ NotifierLag: 900 }, {}, { event: 'metric' }, 1000));
    expect(parseEmfLine(`2026-12-06T03:00:00.000Z\tabc\tINFO\t${line}`)).toEqual([
      {
        name: 'NotifierLag',
        unit: 'Milliseconds',
        value: 900,
        timestamp: 1000,
        dimensions: { service: 'unknown', stage: 'unknown', domain: 'telegram' },
      },
    ]);
    expect(parseEmfLine('{"level":"info","event":"x"}')).toEqual([]);
    expect(parseEmfLine('{"_aws": nope')).toEqual([]);
    expect(parseEmfLine(line.replace('TorrentScanSync', 'Other'))).toEqual([]);
  });
});
