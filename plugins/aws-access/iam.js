// @ts-check
'use strict';
/**
 * The IAM that plugins/aws-access writes into the template, as pure functions:
 * a role per function from its declared policy, secrets and key use, and the
 * key policy. The plugin (index.js) applies them; test/unit/deploy tests them.
 */

/** @typedef {{ Effect: string, Action: string | string[], Resource: unknown, Sid?: string, Principal?: unknown, Condition?: unknown }} Statement */

/**
 * A function's `policy` as a flat list: an entry may be a statement or a
 * list of them (a shared group of custom.access).
 * @param {unknown} policy
 * @returns {Statement[]}
 */
function flattenStatements(policy) {
  if (policy === undefined || policy === null) return [];
  if (!Array.isArray(policy)) throw new TypeError('policy must be a list of statements');
  return policy.flatMap((entry) =>
    Array.isArray(entry) ? flattenStatements(entry) : [/** @type {Statement} */ (entry)],
  );
}

const ref = (/** @type {string} */ name) => ({ Ref: name });

/** The ARN of one secret of this stage; Secrets Manager appends 6 random characters. */
function secretArn(/** @type {string} */ service, /** @type {string} */ stage, /** @type {string} */ name) {
  return {
    'Fn::Join': [
      ':',
      [
        'arn',
        ref('AWS::Partition'),
        'secretsmanager',
        ref('AWS::Region'),
        ref('AWS::AccountId'),
        'secret',
        `${service}/${stage}/${name}-??????`,
      ],
    ],
  };
}

// What Lambda needs to attach a function to its subnets (AWSLambdaVPCAccessExecutionRole's EC2 half,
// without its logs:* on every log group). EC2 scopes none of these to a resource Lambda names.
const VPC_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
];

// What Lambda's event source mapping reads a DynamoDB stream with (the framework's statement).
const STREAM_ACTIONS = [
  'dynamodb:DescribeStream',
  'dynamodb:GetRecords',
  'dynamodb:GetShardIterator',
  'dynamodb:ListStreams',
];

/**
 * @typedef {{
 *   logGroupId: string,
 *   statements: Statement[],
 *   secrets: string[],
 *   service: string,
 *   stage: string,
 *   failureQueues: unknown[],
 *   streams: unknown[],
 *   inVpc: boolean,
 *   tracing?: boolean,
 * }} RoleInput
 */

/**
 * One function's role: its own log group, its `policy`, its secrets, its
 * on-failure queue, the stream it reads, its network's ENIs. Nothing shared.
 * @param {RoleInput} input
 */
function functionRole(input) {
  /** @type {Statement[]} */
  const statements = [
    {
      Effect: 'Allow',
      Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      Resource: [{ 'Fn::GetAtt': [input.logGroupId, 'Arn'] }],
    },
    ...input.statements,
  ];
  if (input.secrets.length)
    statements.push({
      Effect: 'Allow',
      Action: ['secretsmanager:GetSecretValue'],
      // A field (`telegram#bot_token`) is read through its whole secret: IAM cannot grant less.
      Resource: [...new Set(input.secrets.map((name) => name.split('#')[0]))].map((name) =>
        secretArn(input.service, input.stage, name),
      ),
    });
  if (input.failureQueues.length)
    statements.push({
      Effect: 'Allow',
      Action: ['sqs:SendMessage'],
      Resource: uniqueJson(input.failureQueues),
      // Lambda writes the on-failure record with this role from outside the execution environment, and such a
      // call carries no lambda:SourceFunctionArn; every call of the function's own code does (Lambda injects
      // it into the role's credentials there). So Lambda's delivery passes and the code cannot send a record.
      Condition: { Null: { [SOURCE_FUNCTION_KEY]: 'true' } },
    });
  if (input.streams.length)
    statements.push({ Effect: 'Allow', Action: STREAM_ACTIONS, Resource: uniqueJson(input.streams) });
  if (input.inVpc) statements.push({ Effect: 'Allow', Action: VPC_ACTIONS, Resource: '*' });
  // X-Ray takes no resource-level permission: its two write actions on '*', only while tracing is on.
  if (input.tracing) statements.push({ Effect: 'Allow', Action: XRAY_ACTIONS, Resource: '*' });
  return {
    Type: 'AWS::IAM::Role',
    Properties: {
      AssumeRolePolicyDocument: {
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Principal: { Service: ['lambda.amazonaws.com'] }, Action: ['sts:AssumeRole'] }],
      },
      Policies: [{ PolicyName: 'function', PolicyDocument: { Version: '2012-10-17', Statement: statements } }],
    },
  };
}

/** The key Lambda adds to every AWS call made with the credentials of a function's execution environment. */
const SOURCE_FUNCTION_KEY = 'lambda:SourceFunctionArn';

/**
 * The failure queue's policy (decision 380): only the roles of the functions
 * whose on-failure destination it is may send to it (and through their
 * identity policy only Lambda's delivery, not their code: functionRole), no
 * other principal, not even the account's administrators; nothing without TLS.
 * A service principal has no aws:PrincipalArn, so the negated condition holds
 * and it is refused too.
 * @param {string} queueId
 * @param {string[]} senderRoleIds
 */
function failureQueuePolicy(queueId, senderRoleIds) {
  const queue = { 'Fn::GetAtt': [queueId, 'Arn'] };
  return {
    Type: 'AWS::SQS::QueuePolicy',
    Properties: {
      Queues: [ref(queueId)],
      PolicyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Sid: 'OnlyTheFailingFunctionsDestinations',
            Effect: 'Deny',
            Principal: '*',
            Action: 'sqs:SendMessage',
            Resource: queue,
            Condition: {
              ArnNotEquals: {
                'aws:PrincipalArn': [...new Set(senderRoleIds)].sort().map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] })),
              },
            },
          },
          {
            Sid: 'TlsOnly',
            Effect: 'Deny',
            Principal: '*',
            Action: 'sqs:*',
            Resource: queue,
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          },
        ],
      },
    },
  };
}

/** @param {unknown[]} values */
function uniqueJson(values) {
  const seen = new Map(values.map((v) => [JSON.stringify(v), v]));
  return [...seen.values()];
}

// The account root administers a key (so it never becomes unmanageable) and cannot use it:
// no Encrypt, Decrypt, GenerateDataKey, ReEncrypt, nor CreateGrant (a grant would hand use to anyone).
/** What a traced function writes to X-Ray (the Lambda runtime sends its segments with the function's role). */
const XRAY_ACTIONS = ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'];

const KEY_ADMINISTRATION = [
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:UpdateAlias',
  'kms:DescribeKey',
  'kms:EnableKey',
  'kms:DisableKey',
  'kms:EnableKeyRotation',
  'kms:DisableKeyRotation',
  'kms:RotateKeyOnDemand',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListAliases',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListKeyRotations',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:UpdateKeyDescription',
  'kms:RevokeGrant',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
];

/**
 * The condition every use of a key carries: the encryption context our code
 * always sends (custom.keys `encryptionContext`: `{purpose: sync-token}`, the
 * sealer's purpose), so a role's use of the key for anything else — a
 * Decrypt of another purpose's data key, a data key asked without the context
 * — is refused by KMS itself.
 * @param {{ encryptionContext?: Record<string, string> } | undefined} key
 * @returns {Record<string, Record<string, string>> | undefined}
 */
function keyCondition(key) {
  const context = key?.encryptionContext ?? {};
  if (Object.keys(context).length === 0) return undefined;
  return {
    StringEquals: Object.fromEntries(
      Object.entries(context).map(([name, value]) => [`kms:EncryptionContext:${name}`, String(value)]),
    ),
  };
}

/**
 * A key's policy: administration by the account root, and each use granted to
 * exactly the roles of the functions whose `keyUse` names it, under `condition`.
 * @param {Array<{ roleId: string, actions: string[] }>} users
 * @param {Record<string, Record<string, string>>} [condition]
 */
function keyPolicy(users, condition) {
  /** @type {Map<string, string[]>} */
  const byAction = new Map();
  for (const { roleId, actions } of users)
    for (const action of actions) byAction.set(action, [...(byAction.get(action) ?? []), roleId]);
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'AdministrationByTheAccount',
        Effect: 'Allow',
        Principal: {
          AWS: { 'Fn::Join': ['', ['arn:', ref('AWS::Partition'), ':iam::', ref('AWS::AccountId'), ':root']] },
        },
        Action: KEY_ADMINISTRATION,
        Resource: '*',
      },
      ...[...byAction.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([action, roles]) => ({
          Sid: `${action.replace(/^kms:/, '')}ByTheFunctions`,
          Effect: 'Allow',
          Principal: { AWS: [...new Set(roles)].sort().map((roleId) => ({ 'Fn::GetAtt': [roleId, 'Arn'] })) },
          Action: action,
          Resource: '*',
          ...(condition ? { Condition: condition } : {}),
        })),
    ],
  };
}

/** Every logical id a value names through Ref or Fn::GetAtt. @param {unknown} value @param {Set<string>} out */
function referencedIds(value, out = new Set()) {
  if (Array.isArray(value)) for (const v of value) referencedIds(v, out);
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === 'Ref' && typeof v === 'string') out.add(v);
      else if (key === 'Fn::GetAtt') {
        const target = Array.isArray(v) ? v[0] : String(v).split('.')[0];
        if (typeof target === 'string') out.add(target);
      } else referencedIds(v, out);
    }
  }
  return out;
}

/**
 * Drops the DependsOn entries a resource's own Ref or GetAtt already enforces
 * (the framework writes them for HTTP API routes; cfn-lint's W3005).
 * @param {Record<string, { DependsOn?: string | string[], Properties?: unknown }>} resources
 * @returns {number} how many entries were dropped
 */
function dropImpliedDependsOn(resources) {
  let dropped = 0;
  for (const resource of Object.values(resources)) {
    if (resource.DependsOn === undefined) continue;
    const implied = referencedIds(resource.Properties);
    const list = [resource.DependsOn].flat();
    const kept = list.filter((id) => !implied.has(id));
    dropped += list.length - kept.length;
    if (kept.length === 0) delete resource.DependsOn;
    else resource.DependsOn = kept;
  }
  return dropped;
}

module.exports = {
  flattenStatements,
  functionRole,
  failureQueuePolicy,
  keyCondition,
  keyPolicy,
  dropImpliedDependsOn,
  VPC_ACTIONS,
  XRAY_ACTIONS,
  STREAM_ACTIONS,
  SOURCE_FUNCTION_KEY,
  KEY_ADMINISTRATION,
};
