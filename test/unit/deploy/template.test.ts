import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  Cfn,
  checkAuthorizer,
  checkBuckets,
  checkBundles,
  checkConnector,
  checkIam,
  checkOnFailure,
  checkRuntimes,
  checkSecrets,
  checkStream,
  checkTables,
  checkTemplate,
  streamConsumers,
  TemplateContext,
} from '../../../tools/deploy/template-checks';

/**
 * `serverless package` offline (no AWS account), stage prod, and the rules of
 * docs/deploy.md on the CloudFormation it writes. Packaged once, at collection:
 * whether the stream check runs depends on what was packaged. Every rule is also
 * broken on a copy of the template to prove it reports.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const STAGE = 'prod';
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'tss-package-'));
// Secrets set in the packaging environment: none may reach the template.
const PLANTED = {
  AUTH_TOKENS: '[{"name":"planted","sha256":"planted-auth-0001"}]',
  SYNC_TOKEN_KEYS: 'k1:planted-sync-key-0002',
  NATS_USER: 'planted-nats-user-0003',
  NATS_PASSWORD: 'planted-nats-password-0004',
  TORRENT_CLIENT_PASSWORD: 'planted-qbt-password-0005',
  SCAN_SMB_PASSWORD: 'planted-smb-password-0006',
  TELEGRAM_BOT_TOKEN: '123456:planted-telegram-0007',
};
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ...PLANTED,
  SLS_TELEMETRY_DISABLED: '1',
  SLS_NOTIFICATIONS_MODE: 'off',
  NATS_CONNECTOR_DEPLOY: 'true',
  NATS_CONNECTOR_IMAGE: '123456789012.dkr.ecr.us-east-1.amazonaws.com/nats-connector:test',
  NATS_CONNECTOR_SUBNETS: 'subnet-aaaa,subnet-bbbb',
  NATS_CONNECTOR_SECURITY_GROUP: 'sg-cccc',
  ESBUILD_WORK_DIR: path.relative(ROOT, path.join(out, 'esbuild')),
};
delete env.DEPLOY_TARGET; // the default target is the one that deploys
const began = Date.now();
execFileSync(
  process.execPath,
  [
    path.join(ROOT, 'node_modules/osls/bin/serverless.js'),
    'package',
    '--stage',
    STAGE,
    '--package',
    path.join(out, 'package'),
  ],
  {
    cwd: ROOT,
    env,
    stdio: 'pipe',
  },
);
const packagedMs = Date.now() - began;
const template: Cfn = JSON.parse(
  fs.readFileSync(path.join(out, 'package', 'cloudformation-template-update-stack.json'), 'utf8'),
);
const state = JSON.parse(fs.readFileSync(path.join(out, 'package', 'serverless-state.json'), 'utf8'));
const ctx: TemplateContext = {
  service: state.service.service,
  stage: STAGE,
  functions: state.service.functions,
  plantedSecrets: Object.values(PLANTED),
};
// Each function's packaged zip, by function key (osls names it <key>.zip).
const zipBytes: Record<string, number> = Object.fromEntries(
  fs
    .readdirSync(path.join(out, 'package'))
    .filter((file) => file.endsWith('.zip'))
    .map((file) => [file.slice(0, -'.zip'.length), fs.statSync(path.join(out, 'package', file)).size]),
);
const copy = (): Cfn => JSON.parse(JSON.stringify(template));
const rules = (violations: Array<{ rule: string }>) => [...new Set(violations.map((v) => v.rule))];

afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

describe('the packaged CloudFormation template', () => {
  it('keeps every rule', () => {
    process.stdout.write(`[template] serverless package: ${(packagedMs / 1000).toFixed(1)} s\n`);
    expect(checkTemplate(template, ctx)).toEqual([]);
  });

  it('keeps every handler within its bundle budget', () => {
    const rows = Object.entries(zipBytes)
      .sort(([, a], [, b]) => b - a)
      .map(([key, bytes]) => `  ${key.padEnd(22)} ${(bytes / 1024).toFixed(0).padStart(5)} KiB`);
    process.stdout.write(`[template] packaged sizes (zip):\n${rows.join('\n')}\n`);
    expect(Object.keys(zipBytes).length).toBe(Object.keys(ctx.functions).length);
    expect(checkBundles(zipBytes, ctx)).toEqual([]);
  });

  it('bundle: a handler past its budget, a function without one, a budget for no function each is reported', () => {
    const grown = { ...zipBytes, telegramWebhook: zipBytes.telegramWebhook * 2 };
    expect(checkBundles(grown, ctx).map((v) => v.message)).toEqual([
      expect.stringMatching(/^telegramWebhook is \d+ KiB, over its budget of \d+ KiB$/),
    ]);
    const withNew = { ...ctx, functions: { ...ctx.functions, consolePages: { name: 'x-prod-consolePages' } } };
    expect(checkBundles({ ...zipBytes, consolePages: 1000 }, withNew).map((v) => v.message)).toEqual([
      'consolePages (1 KiB) has no bundle budget',
    ]);
    const { natsPing: _gone, ...fewer } = ctx.functions;
    expect(checkBundles(zipBytes, { ...ctx, functions: fewer }).map((v) => v.message)).toEqual([
      'a bundle budget names natsPing, which is no function',
    ]);
    const { natsPing: _lost, ...unpackaged } = zipBytes;
    expect(checkBundles(unpackaged, ctx).map((v) => v.message)).toEqual(['natsPing has no packaged zip']);
  });

  it('runs every function, custom resources included, on nodejs24.x', () => {
    const runtimes = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((r) => r.Properties.Runtime);
    expect(runtimes.length).toBeGreaterThanOrEqual(Object.keys(ctx.functions).length);
    expect(new Set(runtimes)).toEqual(new Set(['nodejs24.x']));
  });

  it('runtime: a deprecated runtime, one within 90 days of deprecation, or one not in the table is reported', () => {
    const on = (runtime: string) => {
      const t = copy();
      const [id] = Object.entries(t.Resources).find(([, r]) => r.Type === 'AWS::Lambda::Function')!;
      t.Resources[id].Properties.Runtime = runtime;
      return t;
    };
    expect(checkRuntimes(on('nodejs20.x'), { today: '2026-12-04' }).map((v) => v.message)).toEqual([
      expect.stringMatching(
        /: nodejs20\.x is deprecated \(deprecated 2026-04-30, creation blocked 2026-08-31, updates blocked 2026-09-30\)$/,
      ),
    ]);
    // nodejs22.x: fine today, refused from 90 days before 2027-04-30.
    expect(checkRuntimes(on('nodejs22.x'), { today: '2026-12-04' })).toEqual([]);
    expect(checkRuntimes(on('nodejs22.x'), { today: '2027-01-30' }).map((v) => v.message)).toEqual([
      expect.stringMatching(
        /nodejs22\.x is deprecated in 90 days \(deprecated 2027-04-30, .*\): move to a newer runtime$/,
      ),
    ]);
    expect(checkRuntimes(on('nodejs22.x'), { today: '2027-01-29' })).toEqual([]);
    expect(checkRuntimes(on('nodejs26.x'), { today: '2026-12-04' }).map((v) => v.message)).toEqual([
      expect.stringMatching(/nodejs26\.x is not in the runtime table .*: add it with its dates$/),
    ]);
    expect(checkRuntimes(on('__proto__'), { today: '2026-12-04' })).toHaveLength(1);
    expect(checkRuntimes(template, { today: '2028-02-01' }).length).toBeGreaterThan(0); // nodejs24.x's own notice
  });

  it('was packaged without tsx or serverless-offline: the deploy target loads neither', () => {
    expect(state.service.plugins).toEqual(['serverless-esbuild', './plugins/nats-event']);
  });

  it('authorizer: a route without it, or a guarded healthcheck, is reported', () => {
    const t = copy();
    const [id] = Object.entries(t.Resources).find(
      ([, r]) => r.Type === 'AWS::ApiGatewayV2::Route' && r.Properties.RouteKey === 'POST /downloads',
    )!;
    delete t.Resources[id].Properties.AuthorizationType;
    expect(checkAuthorizer(t)).toEqual([
      expect.objectContaining({ message: expect.stringContaining('POST /downloads') }),
    ]);
  });

  it('iam: a wildcard, a foreign table, an index wildcard, a foreign function each is reported', () => {
    const role = (t: Cfn) =>
      t.Resources.IamRoleLambdaExecution.Properties.Policies[0].PolicyDocument.Statement as any[];
    const dynamo = (t: Cfn) => role(t).find((s) => [s.Action].flat().includes('dynamodb:GetItem'));
    const broken: Array<(t: Cfn) => void> = [
      (t) => dynamo(t).Resource.push('*'),
      (t) => dynamo(t).Resource.push({ 'Fn::GetAtt': ['SomeoneElsesTable', 'Arn'] }),
      (t) => dynamo(t).Resource.push({ 'Fn::Join': ['/', [{ 'Fn::GetAtt': ['ScanTable', 'Arn'] }, 'index/*']] }),
      (t) => dynamo(t).Resource.push('arn:aws:dynamodb:us-east-1:123456789012:table/other'),
      (t) =>
        (role(t).find((s) => [s.Action].flat().includes('lambda:InvokeFunction')).Resource[0]['Fn::Join'][1][4] =
          'other-service-prod-fn'),
      (t) =>
        (role(t).find((s) => [s.Action].flat().includes('s3:PutObject')).Resource[0]['Fn::Join'][1][1] = 'raw/*/x*'),
    ];
    for (const breakIt of broken) {
      const t = copy();
      breakIt(t);
      expect(rules(checkIam(t, ctx))).toEqual(['iam']);
    }
  });

  it('on-failure: an asynchronous function without a destination is reported (NATS, schedule and invoked alike)', () => {
    for (const id of ['ScanRequestLambdaEvConf', 'ScanPollLambdaEvConf', 'SyncStepLambdaEvConf']) {
      const t = copy();
      delete t.Resources[id];
      expect(checkOnFailure(t, ctx)).toHaveLength(1);
    }
  });

  it('tables: no deletion protection outside dev, or no point-in-time recovery, is reported', () => {
    const t = copy();
    t.Resources.SyncTable.Properties.DeletionProtectionEnabled = false;
    delete t.Resources.ScanTable.Properties.PointInTimeRecoverySpecification;
    expect(checkTables(t, ctx).map((v) => v.message)).toEqual([
      expect.stringContaining('SyncTable'),
      expect.stringContaining('ScanTable'),
    ]);
    expect(checkTables(t, { ...ctx, stage: 'dev' }).map((v) => v.message)).toEqual([
      expect.stringContaining('ScanTable'),
    ]);
  });

  it('bucket: public access or no encryption is reported', () => {
    const t = copy();
    t.Resources.FilesBucket.Properties.PublicAccessBlockConfiguration.BlockPublicPolicy = false;
    delete t.Resources.FilesBucket.Properties.BucketEncryption;
    expect(checkBuckets(t)).toHaveLength(2);
  });

  it('secrets: a literal value, a plain connector variable, or a planted secret anywhere is reported', () => {
    const t = copy();
    t.Resources.AuthorizerLambdaFunction.Properties.Environment.Variables.AUTH_TOKENS = '[]';
    t.Resources.ConnectorTaskDefinition.Properties.ContainerDefinitions[0].Environment.push({
      Name: 'NATS_PASSWORD',
      Value: 'x',
    });
    t.Resources.FilesBucket.Properties.Tags = [{ Key: 'k', Value: PLANTED.TELEGRAM_BOT_TOKEN }];
    expect(checkSecrets(t, ctx)).toHaveLength(3);
  });

  it('connector: its task role invokes exactly the nats functions, nothing more', () => {
    const t = copy();
    t.Resources.ConnectorTaskRole.Properties.Policies[0].PolicyDocument.Statement[0].Resource.push({
      'Fn::GetAtt': ['SyncStepLambdaFunction', 'Arn'],
    });
    expect(rules(checkConnector(t, ctx))).toEqual(['connector']);
    expect(t.Conditions?.DeployConnector).toEqual({ 'Fn::Equals': ['true', 'true'] });
  });

  it('stream: a declared consumer without a mapping, or on a table without a stream, is reported', () => {
    const fake = {
      ...ctx,
      functions: {
        ...ctx.functions,
        botNotify: {
          name: 'x-prod-botNotify',
          events: [{ stream: { type: 'dynamodb', arn: { 'Fn::GetAtt': ['DownloadsTable', 'StreamArn'] } } }],
        },
      },
    };
    expect(rules(checkStream(template, fake))).toEqual(['stream']);
    const t = copy();
    t.Resources.BotNotifyEventSourceMapping = {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: {
        FunctionName: { 'Fn::GetAtt': ['BotNotifyLambdaFunction', 'Arn'] },
        EventSourceArn: { 'Fn::GetAtt': ['DownloadsTable', 'StreamArn'] },
        DestinationConfig: { OnFailure: { Destination: 'arn' } },
      },
    };
    delete t.Resources.DownloadsTable.Properties.StreamSpecification;
    // Both consumers (telegramNotify and the fake) read the table: one message each, all the same.
    expect([...new Set(checkStream(t, fake).map((v) => v.message))]).toEqual(['DownloadsTable has no stream enabled']);
  });

  const consumers = streamConsumers(ctx);
  (consumers.length > 0 ? it : it.skip)(
    consumers.length > 0
      ? `stream: ${consumers.join(', ')} is wired to its table's stream`
      : 'stream: SKIPPED, no function consumes a DynamoDB stream yet (the bot adds one; this check then runs)',
    () => expect(checkStream(template, ctx)).toEqual([]),
  );
});
