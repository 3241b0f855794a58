import { STAGE_SETTINGS as SETTINGS } from './stage-settings';
import { SCAN_IMAGE_FUNCTIONS } from '../../../tools/deploy/scan-image';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import iam from '../../../plugins/aws-access/iam';
import stageRules from '../../../plugins/aws-access/settings';

/**
 * plugins/aws-access as an operator meets it: `serverless package` refusing a
 * stage that could not work on AWS (each refusal comes before anything is
 * built, so these runs take seconds), and `serverless print` on both targets.
 * The template it writes is checked by template.test.ts; its pure rules are
 * tested here case by case.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CLI = path.join(ROOT, 'node_modules/osls/bin/serverless.js');

// Everything the plugin reads from the environment, cleared so the caller's shell cannot change a result.
const CLEARED = [
  'DEPLOY_TARGET',
  ...Object.keys(SETTINGS),
  'SCAN_HOTFOLDER_ROOT',
  'SCAN_HOTFOLDER_MODE',
  'SCAN_HOTFOLDER_PATH',
  'ALLOW_PLAINTEXT_PRIVATE_NETWORK',
  'VPC_SUBNET_IDS',
  'VPC_SECURITY_GROUP_IDS',
  'NATS_CONNECTOR_DEPLOY',
  'NATS_CONNECTOR_IMAGE',
  'NATS_CONNECTOR_SUBNETS',
  'NATS_CONNECTOR_SECURITY_GROUP',
  'SYNC_LEGACY_TOKEN_KEYS',
  'LOG_RETENTION_DAYS',
  'ALARM_EMAILS',
  'SYNC_TOKEN_KMS_KEY',
  'SCAN_FUNCTIONS_IMAGE',
];

interface Run {
  code: number;
  output: string;
}

async function serverless(args: string[], env: Record<string, string>): Promise<Run> {
  const base: NodeJS.ProcessEnv = { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off' };
  for (const name of CLEARED) delete base[name];
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: { ...base, ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

// A package that must be refused: it never gets to write anything here.
const refusedPackage = (env: Record<string, string>) =>
  serverless(['package', '--stage', 'prod', '--package', path.join('/nonexistent', 'never-written')], env);

const printed = (run: Run) => JSON.parse(run.output.slice(run.output.indexOf('{')));

describe('plugins/aws-access on the command line', () => {
  const runs: Record<string, Run> = {};
  beforeAll(async () => {
    const planted = { AUTH_TOKENS: '[planted-auth]', NATS_USER: 'planted-nats-user', SYNC_TOKEN_KEYS: 'k1:planted' };
    const entries = await Promise.all(
      Object.entries({
        nothing: () => refusedPackage({}),
        plaintext: () =>
          refusedPackage({
            ...SETTINGS,
            NATS_URL: 'nats://nats.example.internal:4222',
            TORRENT_CLIENT_URL: 'http://qbt.example.internal',
            TBANK_API_URL: 'http://tbank.example.internal',
            PUBLIC_UI_URL: 'https://127.0.0.1:3000',
          }),
        optOut: () =>
          refusedPackage({
            ...SETTINGS,
            ALLOW_PLAINTEXT_PRIVATE_NETWORK: 'true',
            NATS_URL: 'nats://nats.example.internal:4222',
            TORRENT_CLIENT_URL: 'http://qbt.example.internal',
            // The one problem left, so the run stops here: a local hot folder.
            SCAN_HOTFOLDER_ROOT: '/tmp/hotfolder',
          }),
        networks: () =>
          refusedPackage({
            ...SETTINGS,
            VPC_SUBNET_IDS: 'subnet-0a1b2c3d4e5f60718',
            NATS_CONNECTOR_DEPLOY: 'true',
            NATS_CONNECTOR_SECURITY_GROUP: 'sg-123',
            LOG_RETENTION_DAYS: '45',
          }),
        alarmsNone: () =>
          refusedPackage({
            ...SETTINGS,
            ALARM_EMAILS: 'none',
            // The one problem left, so the run stops before building: a local hot folder.
            SCAN_HOTFOLDER_ROOT: '/tmp/hotfolder',
          }),
        // The design's names for the share, SCAN_SMB_SHARE unset; the one problem left stops the run before building.
        designNames: () => {
          const { SCAN_SMB_SHARE: share, ...rest } = SETTINGS;
          return refusedPackage({
            ...rest,
            SCAN_HOTFOLDER_MODE: 'smb',
            SCAN_HOTFOLDER_PATH: share,
            LOG_RETENTION_DAYS: '45',
          });
        },
        badKeys: () =>
          serverless(['print', '--format', 'json', '--stage', 'prod'], {
            ...planted,
            SYNC_TOKEN_KMS_KEY: 'alias/mine,SyncTokenKey,SyncTokenKey',
          }),
        awsPrint: () => serverless(['print', '--format', 'json', '--stage', 'prod'], { ...planted }),
        imagePrint: () =>
          serverless(['print', '--format', 'json', '--stage', 'prod'], {
            ...planted,
            SCAN_FUNCTIONS_IMAGE: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/scan@sha256:' + 'a'.repeat(64),
          }),
        localPrint: () =>
          serverless(['print', '--format', 'json', '--stage', 'test'], { ...planted, DEPLOY_TARGET: 'local' }),
      }).map(async ([name, run]) => [name, await run()] as const),
    );
    Object.assign(runs, Object.fromEntries(entries));
  }, 120_000);

  it('refuses to package a stage without its endpoint settings, naming each one in one error', () => {
    const { code, output } = runs.nothing;
    expect(code).not.toBe(0);
    expect(output).toContain('Refusing to package stage prod for AWS');
    for (const name of Object.keys(SETTINGS))
      expect(output).toContain(`- ${name} is not set: it has no default on AWS`);
    // Refused before esbuild ran: nothing was built.
    expect(output).not.toMatch(/Packaging .* with esbuild|Compiling/i);
  });

  it('refuses plaintext and loopback endpoints without the opt-out', () => {
    const { code, output } = runs.plaintext;
    expect(code).not.toBe(0);
    expect(output).toMatch(
      /- NATS_URL must be tls:\/\/ \(got nats:\/\/\); on a private network without TLS set ALLOW_PLAINTEXT_PRIVATE_NETWORK=true/,
    );
    expect(output).toMatch(/- TORRENT_CLIENT_URL must be https:\/\/ \(got http:\/\/\)/);
    expect(output).toMatch(/- TBANK_API_URL must be https:\/\/ \(got http:\/\/\)/);
    expect(output).toMatch(/- PUBLIC_UI_URL points at a loopback address/);
  });

  it('with ALLOW_PLAINTEXT_PRIVATE_NETWORK=true accepts them, warning; a local hot folder is still refused', () => {
    const { code, output } = runs.optOut;
    expect(code).not.toBe(0);
    expect(output).toMatch(
      /ALLOW_PLAINTEXT_PRIVATE_NETWORK=true: NATS_URL \(nats:\/\/\), TORRENT_CLIENT_URL \(http:\/\/\)/,
    );
    expect(output).not.toMatch(/- (NATS_URL|TORRENT_CLIENT_URL) must be/);
    expect(output).toContain(
      '- SCAN_HOTFOLDER_ROOT is set: a local hot folder inside Lambda is a private /tmp no scanner sees',
    );
  });

  it("packages with the design's SCAN_HOTFOLDER_MODE=smb and SCAN_HOTFOLDER_PATH in place of SCAN_SMB_SHARE", () => {
    const { code, output } = runs.designNames;
    expect(code).not.toBe(0);
    expect(output).toContain('LOG_RETENTION_DAYS'); // the planted problem, and nothing about the hot folder
    expect(output).not.toMatch(/- SCAN_(SMB_SHARE|HOTFOLDER_MODE|HOTFOLDER_PATH)/);
  });

  it('refuses half a VPC, a connector without its settings, a retention CloudWatch does not have', () => {
    const { code, output } = runs.networks;
    expect(code).not.toBe(0);
    expect(output).toContain('- VPC_SECURITY_GROUP_IDS is not set, and VPC_SUBNET_IDS is: set both or neither');
    expect(output).toContain('- NATS_CONNECTOR_IMAGE is not set (NATS_CONNECTOR_DEPLOY=true needs it)');
    expect(output).toContain('- NATS_CONNECTOR_SUBNETS is not set (NATS_CONNECTOR_DEPLOY=true needs it)');
    expect(output).toContain('- NATS_CONNECTOR_SECURITY_GROUP: "sg-123" is not a security group id (sg-…)');
    expect(output).toMatch(/- LOG_RETENTION_DAYS must be one of CloudWatch's .* \(got "45"\)/);
  });

  it('refuses a kept stage whose alarms would reach nobody; ALARM_EMAILS=none passes, said as a warning', () => {
    expect(runs.nothing.output).toMatch(
      /- ALARM_EMAILS is not set: every alarm would notify a topic nobody subscribes to/,
    );
    const { code, output } = runs.alarmsNone;
    expect(code).not.toBe(0); // the hot folder
    expect(output).not.toMatch(/- ALARM_EMAILS/);
    expect(output).toMatch(/ALARM_EMAILS=none: no address is subscribed to the alarm topic/);
  });

  it('warns that the scan functions are zips without smbclient, and the private functions outside a VPC', () => {
    const { output } = runs.alarmsNone;
    expect(output).toMatch(/SCAN_FUNCTIONS_IMAGE is not set: scanRequest, scanPoll, healthcheck are packaged as zips/);
    expect(output).toMatch(/VPC_SUBNET_IDS and VPC_SECURITY_GROUP_IDS are not set: the functions that reach NATS/);
    // Half a VPC is refused instead, not warned about twice.
    expect(runs.networks.output).not.toMatch(/VPC_SUBNET_IDS and VPC_SECURITY_GROUP_IDS are not set/);
  });

  it('refuses SYNC_TOKEN_KMS_KEY naming anything but key ARNs and SyncTokenKey, or a key twice, whatever the command', () => {
    const { code, output } = runs.badKeys;
    expect(code).not.toBe(0);
    expect(output).toMatch(/SYNC_TOKEN_KMS_KEY: "alias\/mine" is neither a KMS key ARN/);
    expect(output).toMatch(/SYNC_TOKEN_KMS_KEY: names a key twice/);
  });

  it('on the aws target, gives functions the names of their secrets, never a value', () => {
    expect(runs.awsPrint.code).toBe(0);
    const config = printed(runs.awsPrint);
    expect(runs.awsPrint.output).not.toMatch(/planted/);
    expect(config.functions.authorizer.environment).toEqual({
      AUTH_TOKENS_SECRET_ID: 'torrent-scan-sync/prod/auth-tokens',
      SESSION_KEYS_SECRET_ID: 'torrent-scan-sync/prod/session-keys',
    });
    expect(config.functions.syncStep.environment).toMatchObject({
      SYNC_TOKEN_KMS_KEY: { 'Fn::GetAtt': ['SyncTokenKey', 'Arn'] },
    });
    // The tick holds no key (it never opens a token).
    expect(config.functions.syncTick.environment ?? {}).toEqual({});
    expect(config.functions.downloadsList.environment ?? {}).toEqual({});
    expect(config.provider.environment.NATS_URL).toBe('');
    expect(config.functions.authorizer.role).toBe('AuthorizerIamRole');
    expect(config.resources.Resources.SyncTokenKey.Type).toBe('AWS::KMS::Key');
    expect(config.resources.Resources.ConnectorService).toBeUndefined();
  });

  it('with SCAN_FUNCTIONS_IMAGE, runs exactly the functions that start smbclient from the image, each its handler', () => {
    expect(runs.imagePrint.code).toBe(0);
    const config = printed(runs.imagePrint);
    const fromImage = Object.entries(config.functions as Record<string, { image?: { command: string[] } }>)
      .filter(([, fn]) => fn.image)
      .map(([key]) => key);
    expect(fromImage.sort()).toEqual([...SCAN_IMAGE_FUNCTIONS].sort());
    expect(config.functions.scanRequest).toMatchObject({
      image: { uri: expect.stringMatching(/\.dkr\.ecr\./), command: ['functions/scan/request.handler'] },
    });
    expect(config.functions.scanRequest.handler).toBeUndefined();
    expect(config.functions.healthcheck.image.command).toEqual(['functions/health/healthcheck.handler']);
    // Everything else of the function stays: its secrets by name, its role.
    expect(config.functions.scanPoll.environment.SCAN_SMB_PASSWORD_SECRET_ID).toBe(
      'torrent-scan-sync/prod/scan-smb#password',
    );
    expect(config.functions.scanPoll.role).toBe('ScanPollIamRole');
    // Without the setting nothing changes (the print above): every function keeps its zip handler.
    expect(printed(runs.awsPrint).functions.scanRequest.handler).toBe('functions/scan/request.handler');
  });

  it('on the local target, gives functions their secrets from the environment, and no KMS', () => {
    expect(runs.localPrint.code).toBe(0);
    const config = printed(runs.localPrint);
    expect(config.functions.authorizer.environment).toEqual({ AUTH_TOKENS: '[planted-auth]', SESSION_KEYS: '' });
    expect(config.functions.scanRequest.environment).toMatchObject({ NATS_USER: 'planted-nats-user', NATS_JWT: '' });
    // Locally the keyring seals tokens: always listed, whatever SYNC_LEGACY_TOKEN_KEYS says.
    expect(config.functions.syncStep.environment).toMatchObject({ SYNC_TOKEN_KEYS: 'k1:planted' });
    expect(config.functions.syncTick.environment ?? {}).toEqual({});
    expect(config.functions.natsPing.environment).toEqual({
      NATS_USER: 'planted-nats-user',
      NATS_PASSWORD: '',
      NATS_NKEY_SEED: '',
      NATS_JWT: '',
    });
    expect(JSON.stringify(config.functions)).not.toContain('torrent-scan-sync/test/'); // no secret names locally
    expect(config.resources.Resources.SyncTokenKey).toBeUndefined();
    expect(config.resources.Resources.SyncTokenKeyAlias).toBeUndefined();
    // Today's local endpoints stay local.
    expect(config.provider.environment.NATS_URL).toBe('nats://127.0.0.1:4222');
    expect(config.provider.environment.TBANK_API_URL).toBe('http://127.0.0.1:8090');
    expect(config.custom.names.filesBucket).toBe('torrent-scan-sync-test-files');
  });
});

describe('plugins/aws-access rules', () => {
  const required = {
    NATS_URL: { value: 'tls://a.example:4222,tls://b.example:4222', schemes: ['tls'], plaintext: ['nats'] },
    TBANK_API_URL: { value: 'https://tbank.example', schemes: ['https'], plaintext: ['http'] },
    FILES_BUCKET: { value: 'bucket' },
  };

  it('hotFolderProblems: the share under either name (agreeing if both), mode smb or unset, a share path', () => {
    const share = '//files.example.internal/scans';
    expect(stageRules.hotFolderProblems({ share })).toEqual([]);
    expect(stageRules.hotFolderProblems({ mode: 'smb', path: share })).toEqual([]);
    expect(stageRules.hotFolderProblems({ path: '\\\\files\\scans\\in' })).toEqual([]);
    expect(stageRules.hotFolderProblems({ path: share, share })).toEqual([]);
    expect(stageRules.hotFolderProblems({})).toEqual([
      expect.stringMatching(/^SCAN_SMB_SHARE is not set: it has no default on AWS/),
    ]);
    expect(stageRules.hotFolderProblems({ mode: 'local', path: share })).toEqual([
      expect.stringMatching(/^SCAN_HOTFOLDER_MODE is local: on AWS the hot folder is an SMB share/),
    ]);
    expect(stageRules.hotFolderProblems({ path: share, share: '//other/scans' })).toEqual([
      expect.stringMatching(/^SCAN_SMB_SHARE differs from SCAN_HOTFOLDER_PATH/),
    ]);
    expect(stageRules.hotFolderProblems({ path: '/tmp/hot' })).toEqual([
      expect.stringMatching(/^SCAN_HOTFOLDER_PATH is not a share path/),
    ]);
  });

  it('settingProblems: every server of a list is checked; loopback in any spelling is refused', () => {
    expect(stageRules.settingProblems({ required, allowPlaintext: false })).toEqual({ problems: [], warnings: [] });
    const bad = (value: string) =>
      stageRules.settingProblems({
        required: { ...required, NATS_URL: { ...required.NATS_URL, value } },
        allowPlaintext: true,
      }).problems;
    expect(bad('tls://a.example:4222,tls://localhost:4222')).toEqual([expect.stringMatching(/loopback/)]);
    expect(bad('tls://[::1]:4222')).toEqual([expect.stringMatching(/loopback/)]);
    expect(bad('tls://127.0.0.2:4222')).toEqual([expect.stringMatching(/loopback/)]);
    expect(bad('ws://a.example')).toEqual(['NATS_URL must be tls:// (got ws://)']);
    expect(bad('not a url')).toEqual(['NATS_URL is not a URL: "not a url"']);
    expect(
      stageRules.settingProblems({ required: { FILES_BUCKET: { value: 'localhost' } }, allowPlaintext: false })
        .problems,
    ).toEqual(['FILES_BUCKET is a loopback name (localhost)']);
  });

  it('privateNetwork: both or neither, real ids only', () => {
    expect(stageRules.privateNetwork({ subnetIds: '', securityGroupIds: '' })).toEqual({ problems: [] });
    expect(
      stageRules.privateNetwork({
        subnetIds: 'subnet-0a1b2c3d, subnet-0a1b2c3d4e5f60718',
        securityGroupIds: 'sg-0a1b2c3d',
      }),
    ).toEqual({
      vpc: { subnetIds: ['subnet-0a1b2c3d', 'subnet-0a1b2c3d4e5f60718'], securityGroupIds: ['sg-0a1b2c3d'] },
      problems: [],
    });
    expect(stageRules.privateNetwork({ subnetIds: 'subnet-aaaa', securityGroupIds: 'sg-0a1b2c3d' }).problems).toEqual([
      'VPC_SUBNET_IDS: "subnet-aaaa" is not a subnet id (subnet-…)',
    ]);
  });

  it('secrets: names on aws, values locally, the legacy keyring only while switched on, an unknown name refused', () => {
    const catalog = { telegram: { TELEGRAM_BOT_TOKEN: 'bot_token' }, 'auth-tokens': { AUTH_TOKENS: '' } };
    const base = { catalog, service: 'svc', stage: 'prod', env: { AUTH_TOKENS: 'x' } };
    expect(stageRules.secretEnvironment({ ...base, names: ['telegram', 'auth-tokens'], target: 'aws' })).toEqual({
      environment: {
        TELEGRAM_BOT_TOKEN_SECRET_ID: 'svc/prod/telegram#bot_token',
        AUTH_TOKENS_SECRET_ID: 'svc/prod/auth-tokens',
      },
      problems: [],
    });
    expect(stageRules.secretEnvironment({ ...base, names: ['telegram', 'auth-tokens'], target: 'local' })).toEqual({
      environment: { TELEGRAM_BOT_TOKEN: '', AUTH_TOKENS: 'x' },
      problems: [],
    });
    expect(stageRules.secretEnvironment({ ...base, names: ['nats', '__proto__'], target: 'aws' }).problems).toEqual([
      'secret "nats" is not in custom.secretCatalog',
      'secret "__proto__" is not in custom.secretCatalog',
    ]);
    const switches = { 'sync-token-keys': 'false' };
    expect(stageRules.effectiveSecrets(['sync-token-keys', 'nats'], switches, 'aws')).toEqual(['nats']);
    expect(stageRules.effectiveSecrets(['sync-token-keys'], { 'sync-token-keys': 'true' }, 'aws')).toEqual([
      'sync-token-keys',
    ]);
    expect(stageRules.effectiveSecrets(['sync-token-keys'], switches, 'local')).toEqual(['sync-token-keys']);
  });

  it('dropImpliedDependsOn: only what a Ref or GetAtt of the resource already enforces', () => {
    const resources: Record<string, any> = {
      Route: {
        DependsOn: ['Integration', 'Other'],
        Properties: { Target: { 'Fn::Join': ['/', [{ Ref: 'Integration' }]] } },
      },
      Fn: { DependsOn: 'Role', Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] } } },
      Kept: { DependsOn: ['Other'], Properties: {} },
    };
    expect(iam.dropImpliedDependsOn(resources)).toBe(2);
    expect(resources.Route.DependsOn).toEqual(['Other']);
    expect(resources.Fn.DependsOn).toBeUndefined();
    expect(resources.Kept.DependsOn).toEqual(['Other']);
  });

  it('keyPolicy: the root administers without use; each use names exactly its roles', () => {
    const policy = iam.keyPolicy([
      { roleId: 'ARole', actions: ['kms:Decrypt'] },
      { roleId: 'BRole', actions: ['kms:GenerateDataKey', 'kms:Decrypt'] },
    ]);
    const administration = [policy.Statement[0].Action].flat();
    expect(administration.filter((a) => /\*|Encrypt|Decrypt|GenerateDataKey|CreateGrant/.test(a))).toEqual([]);
    expect(policy.Statement.slice(1)).toEqual([
      expect.objectContaining({
        Action: 'kms:Decrypt',
        Principal: { AWS: [{ 'Fn::GetAtt': ['ARole', 'Arn'] }, { 'Fn::GetAtt': ['BRole', 'Arn'] }] },
      }),
      expect.objectContaining({
        Action: 'kms:GenerateDataKey',
        Principal: { AWS: [{ 'Fn::GetAtt': ['BRole', 'Arn'] }] },
      }),
    ]);
  });

  it('keyPolicy: each use only under the encryption context a key declares', () => {
    const condition = iam.keyCondition({ encryptionContext: { purpose: 'sync-token' } });
    expect(condition).toEqual({ StringEquals: { 'kms:EncryptionContext:purpose': 'sync-token' } });
    expect(iam.keyCondition({})).toBeUndefined();
    const policy = iam.keyPolicy([{ roleId: 'ARole', actions: ['kms:Decrypt'] }], condition);
    expect(policy.Statement[0]).not.toHaveProperty('Condition'); // administration
    expect(policy.Statement[1]).toMatchObject({ Action: 'kms:Decrypt', Condition: condition });
  });

  it('keyEnvironment: the stack key alone, or the keys the setting lists in its order; anything else refused', () => {
    const own = { 'Fn::GetAtt': ['SyncTokenKey', 'Arn'] };
    const arn = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    expect(stageRules.keyEnvironment('SyncTokenKey', '')).toEqual({ value: own, external: [], problems: [] });
    expect(stageRules.keyEnvironment('SyncTokenKey', ` ${arn} , SyncTokenKey`)).toEqual({
      value: { 'Fn::Join': [',', [arn, own]] },
      external: [arn],
      problems: [],
    });
    expect(stageRules.keyEnvironment('SyncTokenKey', arn)).toEqual({ value: arn, external: [arn], problems: [] });
    expect(stageRules.keyEnvironment('SyncTokenKey', 'alias/x,1234abcd,SyncTokenKey').problems).toEqual([
      expect.stringMatching(/"alias\/x" is neither a KMS key ARN/),
      expect.stringMatching(/"1234abcd" is neither a KMS key ARN/),
    ]);
    expect(stageRules.keyEnvironment('SyncTokenKey', `${arn},${arn}`).problems).toEqual(['names a key twice']);
  });

  it('alarmSubscribers and scanGatewayWarnings', () => {
    expect(stageRules.alarmSubscribers({ emails: '', required: 'true' }).problem).toMatch(/ALARM_EMAILS is not set/);
    expect(stageRules.alarmSubscribers({ emails: 'a@example.com', required: 'true' })).toEqual({});
    expect(stageRules.alarmSubscribers({ emails: '', required: false })).toEqual({});
    expect(stageRules.alarmSubscribers({ emails: ' none ', required: true }).warning).toMatch(/ALARM_EMAILS=none/);
    const image = { uri: '1.dkr.ecr.eu-west-1.amazonaws.com/scan@sha256:a', functions: ['scanPoll'] };
    const vpc = { subnetIds: ['subnet-1'], securityGroupIds: ['sg-1'] };
    expect(stageRules.scanGatewayWarnings({ scanImage: image, vpc })).toEqual([]);
    expect(stageRules.scanGatewayWarnings({ scanImage: { ...image, uri: '' }, vpc })).toEqual([
      expect.stringMatching(/^SCAN_FUNCTIONS_IMAGE is not set: scanPoll are packaged as zips/),
    ]);
    expect(stageRules.scanGatewayWarnings({ scanImage: image })).toEqual([expect.stringMatching(/outside any VPC/)]);
  });

  it('failureQueuePolicy: only the named roles send, nobody without TLS', () => {
    const policy = iam.failureQueuePolicy('Q', ['BRole', 'ARole', 'BRole']);
    expect(policy.Properties.Queues).toEqual([{ Ref: 'Q' }]);
    expect(policy.Properties.PolicyDocument.Statement).toEqual([
      expect.objectContaining({
        Effect: 'Deny',
        Principal: '*',
        Action: 'sqs:SendMessage',
        Condition: {
          ArnNotEquals: {
            'aws:PrincipalArn': [{ 'Fn::GetAtt': ['ARole', 'Arn'] }, { 'Fn::GetAtt': ['BRole', 'Arn'] }],
          },
        },
      }),
      expect.objectContaining({
        Effect: 'Deny',
        Action: 'sqs:*',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    ]);
  });

  it('logRetention: CloudWatch values only', () => {
    expect(stageRules.logRetention('90')).toEqual({ days: 90 });
    expect(stageRules.logRetention('0').problem).toMatch(/LOG_RETENTION_DAYS must be one of/);
  });
});
