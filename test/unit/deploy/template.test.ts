import { STAGE_SETTINGS as SETTINGS } from './stage-settings';
import {
  checkEdge,
  checkOperations,
  checkTracing,
  dashboardMetrics,
  type OperationsContext,
  PUBLIC_FUNCTIONS,
  REQUIRED_ALARMS,
} from '../../../tools/deploy/operations-checks';
import { METRICS, NAMESPACE } from '../../../lib/metrics/catalog';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Cfn, TemplateContext } from '../../../tools/deploy/template';
import {
  accessOf,
  checkAccess,
  checkIam,
  checkKeys,
  checkPublicFunctions,
  checkRoles,
} from '../../../tools/deploy/iam-checks';
import { checkLoopback, checkSecrets } from '../../../tools/deploy/secret-checks';
import {
  checkFailureQueue,
  failureQueueSenders,
  operatorVerdict,
  sendVerdicts,
  templatePolicies,
} from '../../../tools/deploy/failure-queue-checks';
import { REPLAYABLE_FUNCTIONS } from '../../../tools/ops/trust';
import { TOKEN_PURPOSE } from '../../../lib/sync/wiring';
import {
  asyncFunctions,
  checkAuthorizer,
  checkBuckets,
  checkBundles,
  checkConnector,
  checkOnFailure,
  checkRuntimes,
  checkStream,
  checkTables,
  checkTemplate,
  streamConsumers,
} from '../../../tools/deploy/template-checks';

/**
 * `serverless package` offline (no AWS account), stage prod, and the rules of
 * docs/deploy.md on the CloudFormation it writes. Two variants, packaged once
 * each at collection (whether the stream check runs depends on what was
 * packaged): `plain`, the runbook's stage (no connector, no VPC, no legacy
 * keyring), and `full` (the connector, the functions in a VPC, the legacy
 * keyring). Between them every switch that adds or removes resources is on
 * and off once. Every rule is also broken on a copy of a template to prove it
 * reports; cfn-lint must find nothing in either.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const STAGE = 'prod';
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'tss-package-'));
// Secrets set in the packaging environment: none may reach the template.
const PLANTED = {
  AUTH_TOKENS: '[{"name":"planted","sha256":"planted-auth-0001"}]',
  SESSION_KEYS: 'web:planted-session-key-0008',
  SYNC_TOKEN_KEYS: 'k1:planted-sync-key-0002',
  NATS_USER: 'planted-nats-user-0003',
  NATS_PASSWORD: 'planted-nats-password-0004',
  NATS_NKEY_SEED: 'SUAPLANTEDNKEYSEED0009',
  NATS_JWT: 'planted.nats.jwt-0010',
  TORRENT_CLIENT_PASSWORD: 'planted-qbt-password-0005',
  TORRENT_CLIENT_API_KEY: 'qbt_planted-api-key-0011',
  SCAN_SMB_PASSWORD: 'planted-smb-password-0006',
  TELEGRAM_BOT_TOKEN: '123456:planted-telegram-0007',
  TELEGRAM_WEBHOOK_SECRET: 'planted-webhook-secret-0012',
};
const SUBNETS = 'subnet-0a1b2c3d4e5f60718,subnet-0a1b2c3d4e5f60719';
const NEW_KEY = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const FULL = {
  NATS_CONNECTOR_DEPLOY: 'true',
  NATS_CONNECTOR_IMAGE: '123456789012.dkr.ecr.us-east-1.amazonaws.com/nats-connector:test',
  NATS_CONNECTOR_SUBNETS: SUBNETS,
  NATS_CONNECTOR_SECURITY_GROUP: 'sg-0a1b2c3d4e5f60720',
  VPC_SUBNET_IDS: SUBNETS,
  VPC_SECURITY_GROUP_IDS: 'sg-0a1b2c3d4e5f60721',
  SYNC_LEGACY_TOKEN_KEYS: 'true',
  // Replacing the KMS key (docs/security.md): a key of the operator's own first, the stack's own after it.
  SYNC_TOKEN_KMS_KEY: `${NEW_KEY},SyncTokenKey`,
};

interface Packaged {
  template: Cfn;
  ctx: TemplateContext;
  file: string;
  zipBytes: Record<string, number>;
  ms: number;
}

function packageVariant(name: string, extra: Record<string, string>): Packaged {
  const dir = path.join(out, name);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...PLANTED,
    ...SETTINGS,
    // A kept stage is refused without someone its alarms reach (plugins/aws-access).
    ALARM_EMAILS: 'oncall@example.com',
    ...extra,
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    ESBUILD_WORK_DIR: path.relative(ROOT, path.join(out, `esbuild-${name}`)),
  };
  delete env.DEPLOY_TARGET; // the default target is the one that deploys
  for (const key of Object.keys(FULL)) if (!(key in extra)) delete env[key];
  const began = Date.now();
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/osls/bin/serverless.js'), 'package', '--stage', STAGE, '--package', dir],
    { cwd: ROOT, env, stdio: 'pipe' },
  );
  const ms = Date.now() - began;
  const file = path.join(dir, 'cloudformation-template-update-stack.json');
  const state = JSON.parse(fs.readFileSync(path.join(dir, 'serverless-state.json'), 'utf8'));
  return {
    template: JSON.parse(fs.readFileSync(file, 'utf8')),
    ctx: {
      service: state.service.service,
      stage: STAGE,
      functions: state.service.functions,
      plantedSecrets: Object.values(PLANTED),
      secretCatalog: state.service.custom.secretCatalog,
    },
    file,
    // Each function's packaged zip, by function key (osls names it <key>.zip).
    zipBytes: Object.fromEntries(
      fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.zip'))
        .map((f) => [f.slice(0, -'.zip'.length), fs.statSync(path.join(dir, f)).size]),
    ),
    ms,
  };
}

const plain = packageVariant('plain', {});
const full = packageVariant('full', FULL);
const { template, ctx, zipBytes } = full;
const copy = (t: Cfn = template): Cfn => JSON.parse(JSON.stringify(t));
const rules = (violations: Array<{ rule: string }>) => [...new Set(violations.map((v) => v.rule))];
const statements = (t: Cfn, roleId: string) =>
  t.Resources[roleId].Properties.Policies[0].PolicyDocument.Statement as any[];

afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

/**
 * What each function may do in the `full` variant (accessOf's lines): written
 * from reading each handler and the lib code it calls (docs/deploy.md section
 * 6 explains the columns). A widened or a missing grant fails. The `plain`
 * variant has exactly these without the VPC's ENI actions and the legacy keyring.
 */
const VPC =
  '* ec2:AssignPrivateIpAddresses ec2:CreateNetworkInterface ec2:DeleteNetworkInterface ec2:DescribeNetworkInterfaces ec2:DescribeSubnets ec2:UnassignPrivateIpAddresses';
const secret = (name: string) => `secret:${name} secretsmanager:GetSecretValue`;
const FAILURES = 'AsyncFailuresQueue sqs:SendMessage';
const TORRENT_CLIENT_WRITES = 'DownloadsTable dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem';
const DOWNLOADS_LIST = ['DownloadsTable/index/GSI1 dynamodb:Query', 'DownloadsTable/index/GSI2 dynamodb:Query'];
const SYNC_RUN =
  'SyncTable dynamodb:ConditionCheckItem dynamodb:GetItem dynamodb:PutItem dynamodb:Query dynamodb:UpdateItem';
const EXPECTED_ACCESS: Record<string, string[]> = {
  authorizer: [secret('auth-tokens'), secret('session-keys')],
  healthcheck: [
    VPC,
    'DownloadsTable dynamodb:DescribeTable dynamodb:GetItem',
    'ScanTable dynamodb:GetItem', // the scan poller's recorded wake mode (decision 368)
    'FilesBucket s3:ListBucket',
    secret('nats'),
    secret('scan-smb'),
  ],
  natsPing: [VPC, FAILURES, secret('nats')],
  downloadsCreate: [
    VPC,
    'DownloadsTable dynamodb:BatchGetItem dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem dynamodb:UpdateItem',
    secret('torrent-client'),
  ],
  downloadsList: ['DownloadsTable dynamodb:BatchGetItem', ...DOWNLOADS_LIST],
  downloadsGet: ['DownloadsTable dynamodb:GetItem'],
  downloadsRetry: [VPC, TORRENT_CLIENT_WRITES, secret('torrent-client')],
  downloadsState: [VPC, TORRENT_CLIENT_WRITES, secret('torrent-client')],
  downloadsInfohashes: [TORRENT_CLIENT_WRITES],
  downloadsKeepWaiting: [TORRENT_CLIENT_WRITES],
  downloadsPoll: [
    VPC,
    FAILURES,
    'DownloadsTable dynamodb:BatchGetItem dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem dynamodb:Query',
    'DownloadsTable/index/GSI1 dynamodb:Query',
    secret('torrent-client'),
  ],
  webPages: ['DownloadsTable dynamodb:BatchGetItem dynamodb:GetItem dynamodb:Query', ...DOWNLOADS_LIST],
  webActions: [
    VPC,
    'DownloadsTable dynamodb:BatchGetItem dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem dynamodb:Query',
    secret('torrent-client'),
  ],
  webConsole: [
    'DownloadsTable/index/GSI1 dynamodb:Query',
    'FilesBucket/raw/* s3:GetObject',
    'ScanTable dynamodb:GetItem',
    'ScanTable/index/RECENT dynamodb:Query',
    'SyncTable dynamodb:BatchGetItem dynamodb:GetItem dynamodb:Query',
    'SyncTable/index/ATTEMPTS dynamodb:Query',
    'SyncTable/index/DUE dynamodb:Query',
    'TelegramTable dynamodb:Query',
  ],
  webConsoleRetry: [
    'DownloadsTable dynamodb:GetItem',
    'TelegramTable dynamodb:GetItem dynamodb:UpdateItem',
    secret('telegram'),
  ],
  webSignIn: [secret('auth-tokens'), secret('session-keys')],
  scanRequest: [
    VPC,
    FAILURES,
    'FilesBucket s3:ListBucket',
    'FilesBucket/* s3:GetObject',
    'ScanTable dynamodb:GetItem dynamodb:PutItem dynamodb:UpdateItem',
    'function:scanPoll lambda:InvokeFunction',
    secret('nats'),
    secret('scan-smb'),
  ],
  scanPoll: [
    VPC,
    FAILURES,
    'FilesBucket s3:ListBucket',
    'FilesBucket/* s3:GetObject',
    'FilesBucket/raw/* s3:PutObject',
    'ScanTable dynamodb:GetItem dynamodb:PutItem dynamodb:UpdateItem',
    'ScanTable/index/GSI1 dynamodb:Query',
    'function:scanPoll lambda:InvokeFunction',
    secret('nats'),
    secret('scan-smb'),
  ],
  // No key, no keyring: the tick checks that a token is stored, never opens it (lib/sync/connections.ts hasToken).
  syncTick: [
    FAILURES,
    SYNC_RUN,
    'SyncTable/index/DUE dynamodb:Query',
    'function:syncStep lambda:InvokeFunction',
    'function:syncTickShard lambda:InvokeFunction',
  ],
  syncTickShard: [FAILURES, SYNC_RUN, 'SyncTable/index/DUE dynamodb:Query', 'function:syncStep lambda:InvokeFunction'],
  syncStep: [
    VPC,
    FAILURES,
    'SyncTable dynamodb:BatchGetItem dynamodb:BatchWriteItem dynamodb:ConditionCheckItem dynamodb:GetItem dynamodb:PutItem dynamodb:Query dynamodb:UpdateItem',
    'SyncTokenKey kms:Decrypt',
    `${NEW_KEY} kms:Decrypt`,
    'function:syncStep lambda:InvokeFunction',
    secret('sync-token-keys'),
  ],
  syncConnections: [
    'SyncTable dynamodb:ConditionCheckItem dynamodb:GetItem dynamodb:PutItem',
    'SyncTokenKey kms:GenerateDataKey',
    `${NEW_KEY} kms:GenerateDataKey`,
    secret('sync-token-keys'),
  ],
  syncReseal: [
    'SyncTable dynamodb:GetItem dynamodb:Query dynamodb:UpdateItem',
    'SyncTokenKey kms:Decrypt kms:GenerateDataKey',
    `${NEW_KEY} kms:Decrypt kms:GenerateDataKey`,
    secret('sync-token-keys'),
  ],
  // The purge of the user's synced data: found by Query, deleted in batches.
  syncConnectionDelete: ['SyncTable dynamodb:BatchWriteItem dynamodb:DeleteItem dynamodb:GetItem dynamodb:Query'],
  syncHourly: ['SyncTable dynamodb:GetItem', 'SyncTable/index/DUE dynamodb:Query'],
  syncAttempt: ['SyncTable dynamodb:GetItem dynamodb:Query'],
  syncOperations: ['SyncTable dynamodb:Query'],
  syncPortfolio: [
    'SyncTable dynamodb:BatchGetItem dynamodb:GetItem dynamodb:Query',
    'SyncTable/index/ATTEMPTS dynamodb:Query',
  ],
  syncCalendar: ['SyncTable dynamodb:BatchGetItem dynamodb:Query'],
  syncExport: [
    'SyncTable dynamodb:BatchGetItem dynamodb:GetItem dynamodb:Query',
    'SyncTable/index/ATTEMPTS dynamodb:Query',
  ],
  syncFeedTokens: [
    'SyncTable dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem dynamodb:Query dynamodb:UpdateItem',
  ],
  syncCalendarFeed: ['SyncTable dynamodb:BatchGetItem dynamodb:GetItem dynamodb:Query'],
  apiDocument: [],
  telegramWebhook: [
    VPC,
    'DownloadsTable dynamodb:BatchGetItem dynamodb:DeleteItem dynamodb:GetItem dynamodb:PutItem',
    ...DOWNLOADS_LIST,
    'TelegramTable dynamodb:GetItem dynamodb:PutItem dynamodb:Query dynamodb:UpdateItem',
    secret('telegram'),
    secret('torrent-client'),
  ],
  telegramNotify: [
    FAILURES,
    'DownloadsTable.StreamArn dynamodb:DescribeStream dynamodb:GetRecords dynamodb:GetShardIterator dynamodb:ListStreams',
    'TelegramTable dynamodb:GetItem dynamodb:PutItem dynamodb:Query dynamodb:UpdateItem',
    secret('telegram'),
  ],
  telegramFailures: ['TelegramTable dynamodb:Query'],
};
const PLAIN_ACCESS = Object.fromEntries(
  Object.entries(EXPECTED_ACCESS).map(([key, lines]) => [
    key,
    lines.filter((line) => line !== VPC && line !== secret('sync-token-keys') && !line.startsWith(NEW_KEY)),
  ]),
);

describe('the packaged CloudFormation template', () => {
  it('keeps every rule, in both variants', () => {
    process.stdout.write(
      `[template] serverless package: plain ${(plain.ms / 1000).toFixed(1)} s, full ${(full.ms / 1000).toFixed(1)} s\n`,
    );
    expect(checkTemplate(plain.template, plain.ctx)).toEqual([]);
    expect(checkTemplate(template, ctx)).toEqual([]);
  });

  it('gives each function exactly the access of the table, in both variants', () => {
    expect(checkAccess(template, ctx, EXPECTED_ACCESS)).toEqual([]);
    expect(checkAccess(plain.template, plain.ctx, PLAIN_ACCESS)).toEqual([]);
    // The table is the deployed policy, line for line (a failure above names the line).
    expect(accessOf(template, ctx)).toEqual(
      Object.fromEntries(Object.entries(EXPECTED_ACCESS).map(([k, v]) => [k, [...v].sort()])),
    );
  });

  const lint = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  (lint.status === 0 ? it : it.skip)(
    lint.status === 0
      ? `cfn-lint (${lint.stdout.trim()}) finds nothing in either variant, and does find a broken copy`
      : 'cfn-lint: SKIPPED, cfn-lint is not installed (pip install cfn-lint; docs/deploy.md section 6)',
    () => {
      const broken = copy();
      broken.Resources.FilesBucket.Properties.NotAProperty = true;
      const brokenFile = path.join(out, 'broken.json');
      fs.writeFileSync(brokenFile, JSON.stringify(broken));
      const run = spawnSync('cfn-lint', ['-f', 'json', plain.file, full.file, brokenFile], { encoding: 'utf8' });
      const findings: Array<{ Filename: string; Rule: { Id: string }; Message: string }> = JSON.parse(run.stdout);
      const of = (file: string) => findings.filter((f) => f.Filename === file).map((f) => `${f.Rule.Id} ${f.Message}`);
      expect(of(plain.file)).toEqual([]);
      expect(of(full.file)).toEqual([]);
      expect(of(brokenFile)).toEqual([expect.stringMatching(/^E3002 .*NotAProperty/)]);
    },
    60_000,
  );

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
    const state = JSON.parse(fs.readFileSync(path.join(out, 'full', 'serverless-state.json'), 'utf8'));
    expect(state.service.plugins).toEqual([
      'serverless-esbuild',
      './plugins/nats-event',
      './plugins/aws-access',
      './plugins/aws-operations',
    ]);
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

  it('iam: a wildcard, a foreign table, an index wildcard, a foreign function, a wide ENI grant each is reported', () => {
    const table = (t: Cfn) =>
      statements(t, 'SyncStepIamRole').find((s) => [s.Action].flat().includes('dynamodb:GetItem'));
    const broken: Array<(t: Cfn) => void> = [
      (t) => (table(t).Resource = [table(t).Resource, '*']),
      (t) => (table(t).Resource = [table(t).Resource, { 'Fn::GetAtt': ['SomeoneElsesTable', 'Arn'] }]),
      (t) =>
        (table(t).Resource = [
          table(t).Resource,
          { 'Fn::Join': ['/', [{ 'Fn::GetAtt': ['ScanTable', 'Arn'] }, 'index/*']] },
        ]),
      (t) => (table(t).Resource = [table(t).Resource, 'arn:aws:dynamodb:us-east-1:123456789012:table/other']),
      (t) =>
        (statements(t, 'SyncStepIamRole').find((s) => [s.Action].flat().includes('lambda:InvokeFunction')).Resource[
          'Fn::Join'
        ][1][6] = 'other-service-prod-fn'),
      (t) =>
        (statements(t, 'ScanPollIamRole').find((s) => [s.Action].flat().includes('s3:PutObject')).Resource[
          'Fn::Join'
        ][1][1] = 'raw/*/x*'),
      // '*' only for EC2's ENI actions, nothing else beside them.
      (t) =>
        statements(t, 'SyncStepIamRole')
          .find((s) => s.Resource === '*')
          .Action.push('dynamodb:DeleteTable'),
    ];
    for (const breakIt of broken) {
      const t = copy();
      breakIt(t);
      expect(rules(checkIam(t, ctx))).toEqual(['iam']);
    }
  });

  it('roles: a shared role, a role writing another log group, the framework role or a managed policy is reported', () => {
    const shared = copy();
    shared.Resources.DownloadsGetLambdaFunction.Properties.Role = { 'Fn::GetAtt': ['DownloadsListIamRole', 'Arn'] };
    expect(checkRoles(shared, ctx).map((v) => v.message)).toEqual([
      // Seen from downloadsGet: the role it now runs as writes another function's log group.
      'DownloadsListIamRole writes logs outside DownloadsGetLogGroup: {"Fn::GetAtt":["DownloadsListLogGroup","Arn"]}',
      'DownloadsListIamRole is shared by downloadsList, downloadsGet',
    ]);
    const logs = copy();
    statements(logs, 'AuthorizerIamRole')[0].Resource.push({ 'Fn::GetAtt': ['SyncStepLogGroup', 'Arn'] });
    expect(checkRoles(logs, ctx).map((v) => v.message)).toEqual([
      expect.stringMatching(/^AuthorizerIamRole writes logs outside AuthorizerLogGroup/),
    ]);
    const framework = copy();
    framework.Resources.IamRoleLambdaExecution = { Type: 'AWS::IAM::Role', Properties: { Policies: [] } };
    framework.Resources.HealthcheckIamRole.Properties.ManagedPolicyArns = ['arn:aws:iam::aws:policy/ReadOnlyAccess'];
    expect(rules(checkRoles(framework, ctx))).toEqual(['roles']);
    expect(checkRoles(framework, ctx)).toHaveLength(2);
    // Every function of ours has its own role: as many roles as functions, plus the connector's two.
    const roles = Object.values(template.Resources).filter((r) => r.Type === 'AWS::IAM::Role').length;
    expect(roles).toBe(Object.keys(ctx.functions).length + 2);
  });

  it('access: a widened grant, a missing one, a function without a row each is reported', () => {
    const widened = copy();
    const get = statements(widened, 'DownloadsGetIamRole').find((s) => [s.Action].flat().includes('dynamodb:GetItem'));
    get.Action = [get.Action, 'dynamodb:DeleteItem'].flat();
    statements(widened, 'WebPagesIamRole').push({
      Effect: 'Allow',
      Action: 'secretsmanager:GetSecretValue',
      Resource: { 'Fn::Join': [':', ['arn', 'secretsmanager', 'secret', 'torrent-scan-sync/prod/nats-??????']] },
    });
    expect(checkAccess(widened, ctx, EXPECTED_ACCESS).map((v) => v.message)).toEqual([
      'downloadsGet may: DownloadsTable dynamodb:DeleteItem dynamodb:GetItem',
      'downloadsGet lacks: DownloadsTable dynamodb:GetItem',
      'webPages may: secret:nats secretsmanager:GetSecretValue',
    ]);
    const { syncHourly: _row, ...withoutRow } = EXPECTED_ACCESS;
    expect(checkAccess(template, ctx, withoutRow).map((v) => v.message)).toEqual([
      'syncHourly has no row in the expected access table',
    ]);
  });

  it('public: a public function reading a secret it does not use, or writing what it does not own, is reported', () => {
    const t = copy();
    statements(t, 'AuthorizerIamRole')
      .find((s) => [s.Action].flat().includes('secretsmanager:GetSecretValue'))
      .Resource.push({ 'Fn::Join': [':', ['arn', 'secretsmanager', 'secret', 'torrent-scan-sync/prod/nats-??????']] });
    const get = statements(t, 'HealthcheckIamRole').find((s) => [s.Action].flat().includes('dynamodb:GetItem'));
    get.Action = [get.Action, 'dynamodb:PutItem'].flat();
    statements(t, 'TelegramWebhookIamRole').push({
      Effect: 'Allow',
      Action: ['dynamodb:UpdateItem'],
      Resource: { 'Fn::GetAtt': ['SyncTable', 'Arn'] },
    });
    expect(checkPublicFunctions(t, ctx).map((v) => v.message)).toEqual([
      'authorizer may read secret:nats, which it does not use',
      'healthcheck may dynamodb:PutItem on DownloadsTable, which it does not own',
      'telegramWebhook may dynamodb:UpdateItem on SyncTable, which it does not own',
    ]);
  });

  it('keys: the token key rotates, is kept, and only the sync roles use it; each break is reported', () => {
    const key = template.Resources.SyncTokenKey;
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.Properties.PendingWindowInDays).toBe(30);
    expect(template.Resources.SyncTokenKeyAlias.Properties.AliasName).toBe('alias/torrent-scan-sync-prod-sync-tokens');
    const users = Object.fromEntries(
      Object.entries(accessOf(template, ctx))
        .map(([fn, lines]) => [fn, lines.find((l) => l.startsWith('SyncTokenKey '))])
        .filter(([, line]) => line),
    );
    expect(users).toEqual({
      syncStep: 'SyncTokenKey kms:Decrypt',
      syncConnections: 'SyncTokenKey kms:GenerateDataKey',
      syncReseal: 'SyncTokenKey kms:Decrypt kms:GenerateDataKey',
    });
    const policy = (t: Cfn) => t.Resources.SyncTokenKey.Properties.KeyPolicy.Statement as any[];
    const broken: Array<[(t: Cfn) => void, RegExp[]]> = [
      [(t) => (t.Resources.SyncTokenKey.Properties.EnableKeyRotation = false), [/does not rotate/]],
      [(t) => delete t.Resources.SyncTokenKey.DeletionPolicy, [/is not retained/]],
      [
        (t) => policy(t)[0].Action.push('kms:Decrypt'),
        [/kms:Decrypt is allowed without the encryption context/, /the account root may kms:Decrypt/],
      ],
      [
        (t) => policy(t)[0].Action.push('kms:*'),
        [
          /kms:\* is allowed without the encryption context/,
          /the account root may kms:\*/,
          /a wildcard action for the root/,
        ],
      ],
      [(t) => policy(t)[1].Principal.AWS.push('*'), [/"\*" is not the role of one of our functions/]],
      [
        (t) => policy(t)[1].Principal.AWS.push({ 'Fn::GetAtt': ['ConnectorTaskRole', 'Arn'] }),
        [/"ConnectorTaskRole" is not the role of one of our functions/],
      ],
      [(t) => delete policy(t)[1].Condition, [/kms:Decrypt is allowed without the encryption context/]],
    ];
    for (const [breakIt, messages] of broken) {
      const t = copy();
      breakIt(t);
      expect(checkKeys(t, ctx).map((v) => v.message)).toEqual(messages.map((m) => expect.stringMatching(m)));
    }
  });

  it("keys: every use needs the sealer's encryption context; a replacement key is the functions' first, granted in their roles", () => {
    for (const st of template.Resources.SyncTokenKey.Properties.KeyPolicy.Statement.slice(1))
      expect(st.Condition).toEqual({ StringEquals: { 'kms:EncryptionContext:purpose': TOKEN_PURPOSE } });
    const env = (p: Packaged, id: string) => p.template.Resources[id].Properties.Environment.Variables;
    // Without the setting, the stack's key alone; with it, what it lists, in its order.
    expect(env(plain, 'SyncStepLambdaFunction').SYNC_TOKEN_KMS_KEY).toEqual({ 'Fn::GetAtt': ['SyncTokenKey', 'Arn'] });
    for (const id of ['SyncStepLambdaFunction', 'SyncConnectionsLambdaFunction', 'SyncResealLambdaFunction'])
      expect(env(full, id).SYNC_TOKEN_KMS_KEY).toEqual({
        'Fn::Join': [',', [NEW_KEY, { 'Fn::GetAtt': ['SyncTokenKey', 'Arn'] }]],
      });
    const grant = statements(template, 'SyncStepIamRole').find((st) => [st.Resource].flat().includes(NEW_KEY));
    expect(grant).toEqual({
      Effect: 'Allow',
      Action: ['kms:Decrypt'],
      Resource: [NEW_KEY],
      Condition: { StringEquals: { 'kms:EncryptionContext:purpose': TOKEN_PURPOSE } },
    });
    expect(checkIam(template, ctx)).toEqual([]);
    // The grant without the condition, or on a key no function is given, is reported.
    const t = copy();
    delete statements(t, 'SyncStepIamRole').find((st) => [st.Resource].flat().includes(NEW_KEY)).Condition;
    expect(checkIam(t, ctx).map((v) => v.message)).toEqual([
      `SyncStepIamRole may use ${NEW_KEY} without the encryption context`,
    ]);
    const foreign = copy();
    statements(foreign, 'SyncStepIamRole').find((st) => [st.Resource].flat().includes(NEW_KEY)).Resource = [
      'arn:aws:kms:us-east-1:123456789012:key/99999999-12ab-34cd-56ef-1234567890ab',
    ];
    expect(rules(checkIam(foreign, ctx))).toEqual(['iam']);
  });

  it("failure queue: only Lambda's delivery of each function's own record may send, never its code, an admin or plaintext", () => {
    const senders = failureQueueSenders(template, ctx);
    expect([...senders].sort()).toEqual([...REPLAYABLE_FUNCTIONS, 'telegramNotify'].sort());
    // The replay's list is exactly the template's asynchronous functions (tools/ops/trust.ts).
    expect([...REPLAYABLE_FUNCTIONS].sort()).toEqual(asyncFunctions(template, ctx).sort());
    for (const p of [plain, full]) expect(checkFailureQueue(p.template, p.ctx)).toEqual([]);
    const policies = templatePolicies(template, ctx);
    for (const key of senders)
      expect(`${key} ${JSON.stringify(sendVerdicts(policies, key))}`).toBe(
        `${key} ${JSON.stringify({ delivery: 'allowed', code: 'not-allowed', plaintext: 'denied' })}`,
      );
    // A role the queue is no destination of is refused by the queue's policy itself, whatever its own says.
    expect(sendVerdicts(policies, 'syncConnections')).toEqual({
      delivery: 'denied',
      code: 'denied',
      plaintext: 'denied',
    });
    expect(operatorVerdict(policies)).toBe('denied');

    // As before the fix: the role's grant without its condition, the queue without its policy.
    const unconditioned = copy();
    delete statements(unconditioned, 'SyncStepIamRole').find((st) => [st.Action].flat().includes('sqs:SendMessage'))
      .Condition;
    expect(checkFailureQueue(unconditioned, ctx).map((v) => v.message)).toEqual([
      'syncStep: its own code may send to the failure queue',
    ]);
    const open = copy();
    delete open.Resources.AsyncFailuresQueuePolicy;
    expect(checkFailureQueue(open, ctx).map((v) => v.message)).toEqual([
      'the failure queue has no queue policy',
      ...[...senders].map((key) => `${key}: a send without TLS is allowed`),
      "an administrator's role may send to the failure queue",
    ]);
    // A grant to an HTTP function's role is refused by the queue's policy; with its role named there too, reported.
    const widened = copy();
    statements(widened, 'SyncConnectionsIamRole').push({
      Effect: 'Allow',
      Action: ['sqs:SendMessage'],
      Resource: [{ 'Fn::GetAtt': ['AsyncFailuresQueue', 'Arn'] }],
    });
    expect(checkFailureQueue(widened, ctx)).toEqual([]);
    widened.Resources.AsyncFailuresQueuePolicy.Properties.PolicyDocument.Statement[0].Condition.ArnNotEquals[
      'aws:PrincipalArn'
    ].push({ 'Fn::GetAtt': ['SyncConnectionsIamRole', 'Arn'] });
    expect(checkFailureQueue(widened, ctx).map((v) => v.message)).toEqual([
      'syncConnections: its own code may send to the failure queue',
      'syncConnections has no on-failure destination and may send',
    ]);
  });

  it('loopback: an address of this machine in any function environment is reported', () => {
    const t = copy();
    const vars = (id: string) => t.Resources[id].Properties.Environment.Variables;
    vars('NatsPingLambdaFunction').NATS_URL = 'tls://nats.example.internal:4222,nats://127.0.0.1:4222';
    vars('TelegramNotifyLambdaFunction').PUBLIC_UI_URL = 'http://localhost:3000';
    vars('SyncStepLambdaFunction').TBANK_API_URL = 'http://[::1]:8090';
    expect(checkLoopback(t).map((v) => v.message)).toEqual([
      expect.stringMatching(/^NatsPingLambdaFunction NATS_URL is a loopback address/),
      expect.stringMatching(/^SyncStepLambdaFunction TBANK_API_URL/),
      expect.stringMatching(/^TelegramNotifyLambdaFunction PUBLIC_UI_URL/),
    ]);
    // The aws target packages no local default at all: not one value names loopback.
    expect(checkLoopback(plain.template)).toEqual([]);
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

  it('bucket: public access, no encryption or a policy letting plaintext through is reported', () => {
    const t = copy();
    t.Resources.FilesBucket.Properties.PublicAccessBlockConfiguration.BlockPublicPolicy = false;
    delete t.Resources.FilesBucket.Properties.BucketEncryption;
    expect(checkBuckets(t)).toHaveLength(2);
    expect(template.Resources.FilesBucketPolicy.Properties.PolicyDocument.Statement).toEqual([
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    ]);
    const plaintext = copy();
    delete plaintext.Resources.FilesBucketPolicy;
    expect(checkBuckets(plaintext).map((v) => v.message)).toEqual([
      'FilesBucket has no policy refusing requests without TLS',
    ]);
  });

  it('secrets: only secret names in function configuration, each one the catalog makes, read by exactly that role', () => {
    const vars = template.Resources.TelegramWebhookLambdaFunction.Properties.Environment.Variables;
    expect(vars.TELEGRAM_BOT_TOKEN_SECRET_ID).toBe('torrent-scan-sync/prod/telegram#bot_token');
    expect(vars.TORRENT_CLIENT_PASSWORD_SECRET_ID).toBe('torrent-scan-sync/prod/torrent-client#password');
    expect(vars.TELEGRAM_BOT_TOKEN).toBeUndefined();
    expect(template.Resources.AuthorizerLambdaFunction.Properties.Environment.Variables.AUTH_TOKENS_SECRET_ID).toBe(
      'torrent-scan-sync/prod/auth-tokens',
    );
    // The legacy keyring only with SYNC_LEGACY_TOKEN_KEYS=true; the KMS key's ARN on the functions that use it.
    const sync = (p: Packaged) => p.template.Resources.SyncStepLambdaFunction.Properties.Environment.Variables;
    expect(sync(full).SYNC_TOKEN_KEYS_SECRET_ID).toBe('torrent-scan-sync/prod/sync-token-keys');
    expect(sync(plain).SYNC_TOKEN_KEYS_SECRET_ID).toBeUndefined();
    expect(sync(plain).SYNC_TOKEN_KMS_KEY).toEqual({ 'Fn::GetAtt': ['SyncTokenKey', 'Arn'] });

    const broken: Array<[(v: Record<string, any>, t: Cfn) => void, RegExp]> = [
      [(v) => (v.AUTH_TOKENS = '[]'), /authorizer AUTH_TOKENS is in the configuration/],
      [(v) => (v.SESSION_KEYS = '{{resolve:secretsmanager:x}}'), /dynamic reference|SESSION_KEYS is in the/],
      [(v) => (v.AUTH_TOKENS_SECRET_ID = 'torrent-scan-sync/prod/no-such-secret'), /no-such-secret is not in custom/],
      [
        (v) => (v.AUTH_TOKENS_SECRET_ID = 'torrent-scan-sync/prod/session-keys'),
        /session-keys does not fill AUTH_TOKENS/,
      ],
      [(v) => (v.AUTH_TOKENS_SECRET_ID = 'torrent-scan-sync/prod/auth-tokens#x'), /is key "" of auth-tokens, not "x"/],
      [(v) => (v.TORRENT_CLIENT_API_KEY = 'qbt_x'), /TORRENT_CLIENT_API_KEY is in the configuration/],
      [(v) => (v.SYNC_TOKEN_KMS_KEY = 'k1:abc'), /SYNC_TOKEN_KMS_KEY is not what it must be/],
      [
        (_v, t) => (t.Resources.FilesBucket.Properties.Tags = [{ Key: 'k', Value: PLANTED.NATS_JWT }]),
        /environment is written/,
      ],
      [
        (_v, t) =>
          t.Resources.ConnectorTaskDefinition.Properties.ContainerDefinitions[0].Environment.push({
            Name: 'NATS_PASSWORD',
            Value: 'x',
          }),
        /NATS_PASSWORD is plain task environment/,
      ],
      [
        (v) => delete v.SESSION_KEYS_SECRET_ID,
        /may read \[auth-tokens, session-keys\] but its variables name \[auth-tokens\]/,
      ],
    ];
    for (const [breakIt, message] of broken) {
      const t = copy();
      breakIt(t.Resources.AuthorizerLambdaFunction.Properties.Environment.Variables, t);
      expect(checkSecrets(t, ctx).map((v) => v.message)).toContainEqual(expect.stringMatching(message));
    }
  });

  it('connector: its task role invokes exactly the nats functions; without it, none of its resources', () => {
    const t = copy();
    t.Resources.ConnectorTaskRole.Properties.Policies[0].PolicyDocument.Statement[0].Resource.push({
      'Fn::GetAtt': ['SyncStepLambdaFunction', 'Arn'],
    });
    expect(rules(checkConnector(t, ctx))).toEqual(['connector']);
    // Decided at package time: no CloudFormation condition at all (cfn-lint W8003 on a constant one).
    expect(template.Conditions).toBeUndefined();
    expect(Object.values(plain.template.Resources).filter((r) => r.Type.startsWith('AWS::ECS::'))).toEqual([]);
    const leftover = copy(plain.template);
    leftover.Resources.ConnectorCluster = template.Resources.ConnectorCluster;
    expect(checkConnector(leftover, plain.ctx).map((v) => v.message)).toEqual([
      "ConnectorCluster is packaged without the connector's task",
    ]);
  });

  it('networks: the functions that reach private hosts, and only they, run in the VPC; every log group keeps 90 days', () => {
    const inVpc = (p: Packaged) =>
      Object.keys(p.ctx.functions).filter((key) => {
        const id = `${key.charAt(0).toUpperCase()}${key.slice(1)}LambdaFunction`;
        return p.template.Resources[id].Properties.VpcConfig;
      });
    expect(inVpc(full).sort()).toEqual(
      [
        'healthcheck',
        'natsPing',
        'downloadsCreate',
        'downloadsRetry',
        'downloadsState',
        'downloadsPoll',
        'webActions',
        'scanRequest',
        'scanPoll',
        'syncStep',
        'telegramWebhook',
      ].sort(),
    );
    expect(template.Resources.ScanPollLambdaFunction.Properties.VpcConfig).toEqual({
      SecurityGroupIds: ['sg-0a1b2c3d4e5f60721'],
      SubnetIds: SUBNETS.split(','),
    });
    expect(inVpc(plain)).toEqual([]);
    const retention = Object.entries(template.Resources)
      .filter(([, r]) => r.Type === 'AWS::Logs::LogGroup')
      .map(([, r]) => r.Properties.RetentionInDays);
    expect(new Set(retention)).toEqual(new Set([90]));
    // + the connector's and the HTTP API's access log
    expect(retention).toHaveLength(Object.keys(ctx.functions).length + 2);
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

/**
 * docs/deploy.md cannot drift from the template: every setting it exports is
 * read by serverless.yml, every setting the aws target requires is exported in
 * its deploy block, and the secrets it creates are exactly those the runbook's
 * stage names (the legacy keyring, which only an upgraded stage has, is kept,
 * never created).
 */
describe('docs/deploy.md against the template', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/deploy.md'), 'utf8');
  const yml = fs.readFileSync(path.join(ROOT, 'serverless.yml'), 'utf8');
  const blocks = [...doc.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  const exported = (text: string) =>
    [...text.matchAll(/^export (.*)$/gm)].flatMap((m) => [...m[1].matchAll(/([A-Z][A-Z0-9_]*)=/g)].map((n) => n[1]));
  const created = [...doc.matchAll(/create-secret --name \$S\/([a-z0-9-]+)/g)].map((m) => m[1]);
  const named = (p: Packaged) =>
    new Set(
      Object.values(p.template.Resources)
        .filter((r) => r.Type === 'AWS::Lambda::Function')
        .flatMap((r) => Object.entries<unknown>(r.Properties.Environment?.Variables ?? {}))
        .filter(([name, value]) => name.endsWith('_SECRET_ID') && typeof value === 'string' && value.includes('/'))
        .map(([, value]) => String(value).split('/')[2].split('#')[0]),
    );

  it('exports only settings the template reads', () => {
    const names = blocks.flatMap(exported);
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((name) => !new RegExp(`\\benv:${name}\\b`).test(yml))).toEqual([]);
  });

  it('exports every setting the aws target requires, in the block that deploys', () => {
    const deploy = blocks.find((b) => /serverless deploy --stage /.test(b) && /^export /m.test(b))!;
    expect(exported(deploy).sort()).toEqual(expect.arrayContaining(Object.keys(SETTINGS).sort()));
    expect(deploy).not.toMatch(/BROKERAGE_API_URL/);
  });

  it('creates exactly the secrets the template names, each once; the legacy keyring only on an upgraded stage', () => {
    expect(new Set(created).size).toBe(created.length);
    expect(new Set(created)).toEqual(named(plain));
    expect(named(full)).toEqual(new Set([...created, 'sync-token-keys']));
    expect(new Set(Object.keys(ctx.secretCatalog))).toEqual(named(full));
    expect(doc).toMatch(/SYNC_LEGACY_TOKEN_KEYS=true/);
  });
});

describe('what the on-call person gets (tools/deploy/operations-checks.ts, plugins/aws-operations)', () => {
  const operationsDoc = fs.readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
  const octx: OperationsContext = {
    functions: ctx.functions,
    metrics: new Set(Object.keys(METRICS)),
    anchors: new Set([...operationsDoc.matchAll(/<a id="([a-z0-9-]+)"><\/a>/g)].map((m) => m[1])),
    namespace: NAMESPACE,
  };

  it('passes on both packaged variants', () => {
    expect(checkOperations(plain.template, octx)).toEqual([]);
    expect(checkOperations(template, octx)).toEqual([]);
  });

  it('every alarm notifies the topic, names a runbook section that exists, and watches an emitted metric', () => {
    const alarms = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm');
    // Two a function, and those of the runbooks.
    expect(alarms).toHaveLength(Object.keys(ctx.functions).length * 2 + REQUIRED_ALARMS.length);
    expect(template.Resources.SyncNotSucceededAlarm.Properties).toMatchObject({
      Namespace: NAMESPACE,
      MetricName: 'SyncAttemptsNotSucceeded',
      Period: 3600,
      AlarmActions: [{ Ref: 'AlarmTopic' }],
    });
    expect(template.Resources.AuthorizerErrorsAlarm.Properties.Threshold).toBe(100);
    expect(template.Resources.DownloadsPollErrorsAlarm.Properties.Threshold).toBe(1);
  });

  it('reports an alarm without an action, a runbook section or a metric nobody emits, and a missing alarm', () => {
    const t = copy();
    delete t.Resources.SyncStepThrottlesAlarm;
    delete t.Resources.FailureQueueAgeAlarm;
    t.Resources.ScanAnswersLateAlarm.Properties.AlarmActions = [];
    t.Resources.ScanAnswerDelayAlarm.Properties.AlarmDescription = 'slow. Runbook: docs/operations.md#nowhere';
    t.Resources.SyncNotSucceededAlarm.Properties.MetricName = 'SyncAttemptsThatNobodyEmits';
    t.Resources.Dashboard.Properties.DashboardBody['Fn::Sub'][0] = t.Resources.Dashboard.Properties.DashboardBody[
      'Fn::Sub'
    ][0].replace('"NotifierLag"', '"NotifierLagNobodyEmits"');
    expect(
      checkOperations(t, octx)
        .map((v) => v.message)
        .sort(),
    ).toEqual(
      [
        'FailureQueueAgeAlarm is missing',
        'ScanAnswerDelayAlarm names runbook section #nowhere, which docs/operations.md lacks',
        'ScanAnswersLateAlarm notifies no one (no AlarmActions to the alarm topic)',
        'SyncNotSucceededAlarm watches SyncAttemptsThatNobodyEmits, which no handler emits',
        'Dashboard shows NotifierLagNobodyEmits, which no handler emits',
        'syncStep has no Throttles alarm',
      ].sort(),
    );
  });

  it("the dashboard shows the alarms' figures, its references live", () => {
    const names = dashboardMetrics(template.Resources.Dashboard.Properties.DashboardBody).map((m) => m.name);
    for (const name of [
      'Errors',
      'Throttles',
      'ApproximateNumberOfMessagesVisible',
      'SyncAttemptsNotSucceeded',
      'ScanAnswerDelay',
      'NotifierLag',
      'TorrentLoginRefused',
    ])
      expect(names).toContain(name);
    const [, refs] = template.Resources.Dashboard.Properties.DashboardBody['Fn::Sub'];
    expect(Object.values(refs)).toContainEqual({ Ref: 'TelegramNotifyLambdaFunction' });
  });

  it('the edge: access log with the principal and request id, stage throttling, reserved concurrency, a route-keyed cache', () => {
    const stage = template.Resources.HttpApiStage.Properties;
    expect(stage.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
    expect(stage.AccessLogSettings.Format).toContain('"principal":"$context.authorizer.principalId"');
    for (const key of PUBLIC_FUNCTIONS)
      expect(
        template.Resources[`${key[0].toUpperCase()}${key.slice(1)}LambdaFunction`].Properties
          .ReservedConcurrentExecutions,
      ).toBeGreaterThan(0);
    const authorizers = Object.values(template.Resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Authorizer');
    const bearer = authorizers.find((a) => a.Properties.Name === 'bearer')!.Properties;
    expect(bearer).toMatchObject({ AuthorizerResultTtlInSeconds: 30 });
    expect(bearer.IdentitySource).toEqual(['$request.header.Authorization', '$context.routeKey']);
    // The session authorizer has no identity source (a browser without a cookie must reach it): never cached.
    expect(authorizers.find((a) => a.Properties.Name === 'session')!.Properties.AuthorizerResultTtlInSeconds).toBe(0);

    const t = copy();
    t.Resources.HttpApiStage.Properties.DefaultRouteSettings = {};
    delete t.Resources.WebSignInLambdaFunction.Properties.ReservedConcurrentExecutions;
    const cached = Object.values(t.Resources).find((r: any) => r.Properties?.Name === 'bearer') as any;
    cached.Properties.IdentitySource = ['$request.header.Authorization'];
    expect(
      checkEdge(t)
        .map((v) => v.message)
        .sort(),
    ).toEqual(
      [
        'HttpApiAuthorizerBearer caches decisions without the route in its key',
        'HttpApiStage has no stage throttling',
        'webSignIn is public and has no reserved concurrency',
      ].sort(),
    );
  });

  it('tracing: every function traced, each role able to write its segments', () => {
    const traced = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(traced.every((r) => r.Properties.TracingConfig?.Mode === 'Active')).toBe(true);
    const t = copy();
    t.Resources.SyncStepIamRole.Properties.Policies[0].PolicyDocument.Statement = statements(
      t,
      'SyncStepIamRole',
    ).filter((st) => ![st.Action].flat().includes('xray:PutTraceSegments'));
    expect(checkTracing(t).map((v) => v.message)).toEqual([
      'SyncStepLambdaFunction is traced but its role cannot write to X-Ray',
    ]);
  });
});
