// @ts-check
'use strict';
/**
 * What each function may reach, and the refusal of a stage that could not
 * work on AWS (docs/deploy.md sections 2, 3 and 6; decisions 250-259). Loaded
 * on both targets, dependency-free like plugins/nats-event (no tsx on `aws`).
 *
 * - Function properties: `secrets` (names of custom.secretCatalog), `policy`
 *   (the IAM statements its handler needs), `privateNetwork` (runs in the VPC
 *   of custom.vpc), `keyUse` (what it does with a key of custom.keys).
 * - Every command (`initialize`): each function's secrets in its environment
 *   (`<VAR>_SECRET_ID` names on `aws`, values from the environment on `local`),
 *   its role's logical id, its VPC; the connector's resources only with
 *   NATS_CONNECTOR_DEPLOY=true; on `aws` each key's ARN to its users, locally
 *   no key at all.
 * - Packaging on `aws`: refuses a stage whose endpoint settings are missing,
 *   loopback or plaintext (naming each), then writes one IAM role per
 *   function, each key's policy, the failure queue's policy (its senders:
 *   the roles of the functions it is the destination of), and drops
 *   DependsOn that a Ref already implies; every log group keeps its logs LOG_RETENTION_DAYS.
 */
const iam = require('./iam');
const stageRules = require('./settings');

/** @typedef {import('./iam').Statement} Statement */

/**
 * @typedef {{
 *   name: string,
 *   environment?: Record<string, unknown>,
 *   events?: Array<Record<string, any>>,
 *   destinations?: { onFailure?: unknown },
 *   secrets?: string[],
 *   policy?: unknown[],
 *   privateNetwork?: boolean,
 *   keyUse?: Record<string, string[]>,
 *   role?: unknown,
 *   vpc?: unknown,
 *   handler?: string,
 *   runtime?: string,
 *   image?: { uri: string, command: string[] },
 * }} FunctionDef
 */

const STATEMENT_SCHEMA = {
  type: 'object',
  properties: {
    Sid: { type: 'string' },
    Effect: { enum: ['Allow'] },
    Action: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    Resource: {},
    Condition: { type: 'object' },
  },
  required: ['Effect', 'Action', 'Resource'],
  additionalProperties: false,
};

const FUNCTION_PROPERTIES = {
  properties: {
    // A whole secret (`telegram`), or one of its fields (`telegram#bot_token`) for a function that needs no other.
    secrets: {
      type: 'array',
      items: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*(#[a-z0-9_]+)?$' },
      uniqueItems: true,
    },
    policy: {
      type: 'array',
      items: { anyOf: [STATEMENT_SCHEMA, { type: 'array', items: STATEMENT_SCHEMA }] },
    },
    privateNetwork: { type: 'boolean' },
    keyUse: {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string', pattern: '^kms:[A-Za-z]+$' }, minItems: 1 },
    },
  },
};

class AwsAccess {
  /**
   * @param {any} serverless
   * @param {unknown} _options
   * @param {{ log?: { warning(message: string): void, notice(message: string): void } }} [utils]
   */
  constructor(serverless, _options, utils) {
    this.serverless = serverless;
    this.log = utils?.log;
    serverless.configSchemaHandler.defineFunctionProperties('aws', FUNCTION_PROPERTIES);
    this.hooks = {
      initialize: () => this.configure(),
      'before:package:initialize': () => this.refuseIncompleteStage(),
      'before:deploy:function:initialize': () => this.refuseIncompleteStage(),
      'before:aws:package:finalize:saveServiceState': () => this.writeAccess(),
    };
  }

  get custom() {
    return this.serverless.service.custom ?? {};
  }

  get target() {
    return String(this.custom.target ?? 'aws');
  }

  get resources() {
    const service = this.serverless.service;
    service.resources ??= {};
    service.resources.Resources ??= {};
    return /** @type {Record<string, any>} */ (service.resources.Resources);
  }

  /** @returns {Array<[string, FunctionDef]>} */
  functions() {
    const service = this.serverless.service;
    return service.getAllFunctions().map((/** @type {string} */ key) => [key, service.getFunction(key)]);
  }

  /** @param {string} key */
  normalized(key) {
    return this.serverless.getProvider('aws').naming.getNormalizedFunctionName(key);
  }

  /** @param {string} key */
  roleId(key) {
    return `${this.normalized(key)}IamRole`;
  }

  /** @param {string[]} problems */
  fail(problems) {
    const stage = this.serverless.getProvider('aws').getStage();
    throw new this.serverless.classes.Error(
      `Refusing to package stage ${stage} for AWS (docs/deploy.md section 3):\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
    );
  }

  configure() {
    const service = this.serverless.service;
    const stage = this.serverless.getProvider('aws').getStage();
    /** @type {string[]} */
    const problems = [];

    const connector = this.custom.connector ?? {};
    if (String(connector.deploy) !== 'true') for (const id of connector.resources ?? []) delete this.resources[id];

    /** @type {Record<string, { environment: string, alias?: string, override?: string }>} */
    const keys = this.custom.keys ?? {};
    if (this.target !== 'aws')
      for (const [keyId, key] of Object.entries(keys)) {
        delete this.resources[keyId];
        if (key.alias) delete this.resources[key.alias];
      }

    const network = stageRules.privateNetwork(this.custom.vpc ?? {});
    for (const [key, fn] of this.functions()) {
      const names = stageRules.effectiveSecrets(fn.secrets ?? [], this.custom.awsSecretSwitches ?? {}, this.target);
      const secrets = stageRules.secretEnvironment({
        names,
        catalog: this.custom.secretCatalog ?? {},
        target: this.target,
        service: service.service,
        stage,
        env: process.env,
      });
      problems.push(...secrets.problems.map((p) => `${key}: ${p}`));
      fn.environment = { ...(fn.environment ?? {}), ...secrets.environment };
      for (const keyId of Object.keys(fn.keyUse ?? {})) {
        if (!keys[keyId]) problems.push(`${key}: keyUse names ${keyId}, which is not in custom.keys`);
        else if (this.target === 'aws') {
          const chosen = stageRules.keyEnvironment(keyId, keys[keyId].override);
          problems.push(...chosen.problems.map((p) => `${keys[keyId].environment}: ${p}`));
          fn.environment[keys[keyId].environment] = chosen.value;
        }
      }
      if (fn.privateNetwork && network.vpc) fn.vpc = network.vpc;
      if (this.target === 'aws' && stageRules.runsFromImage(key, this.custom.scanImage)) {
        // Lambda starts the image's handler: the function becomes `image`, with no zip and no runtime of its own.
        fn.image = { uri: String(this.custom.scanImage.uri), command: [String(fn.handler)] };
        delete fn.handler;
        delete fn.runtime;
      }
      fn.role = this.roleId(key);
    }
    // A wrong name is a mistake in serverless.yml, whatever the command.
    if (problems.length) throw new this.serverless.classes.Error(problems.join('\n'));
  }

  refuseIncompleteStage() {
    if (this.target !== 'aws') return;
    const custom = this.custom;
    const allowPlaintext = String(custom.allowPlaintextPrivateNetwork) === 'true';
    const settings = stageRules.settingProblems({
      required: custom.requiredSettings ?? {},
      refused: custom.refusedSettings ?? {},
      allowPlaintext,
    });
    const network = stageRules.privateNetwork(custom.vpc ?? {});
    const problems = [
      ...settings.problems,
      ...stageRules.hotFolderProblems(custom.hotFolder ?? {}),
      ...network.problems,
    ];
    const alarms = stageRules.alarmSubscribers({
      emails: custom.operations?.alarmEmails,
      required: custom.operations?.alarmSubscriberRequired,
    });
    if (alarms.problem) problems.push(alarms.problem);
    if (alarms.warning) this.warn(alarms.warning);
    if (!network.problems.length)
      for (const warning of stageRules.scanGatewayWarnings({ scanImage: custom.scanImage, vpc: network.vpc }))
        this.warn(warning);
    const retention = stageRules.logRetention(custom.logRetentionDays);
    if (retention.problem) problems.push(retention.problem);
    if (String(custom.connector?.deploy) === 'true')
      problems.push(...stageRules.connectorProblems(custom.connector?.settings ?? {}));
    for (const warning of settings.warnings) this.warn(warning);
    if (problems.length) this.fail(problems);
  }

  /** @param {string} message */
  warn(message) {
    if (this.log) this.log.warning(message);
    else process.stderr.write(`Warning: ${message}\n`);
  }

  writeAccess() {
    const service = this.serverless.service;
    const stage = this.serverless.getProvider('aws').getStage();
    const naming = this.serverless.getProvider('aws').naming;
    const template = service.provider.compiledCloudFormationTemplate;
    const resources = /** @type {Record<string, any>} */ (template.Resources);
    /** @type {Record<string, { environment: string, override?: string, encryptionContext?: Record<string, string> }>} */
    const keys = this.custom.keys ?? {};
    /** @type {Map<string, Array<{ roleId: string, actions: string[] }>>} */
    const keyUsers = new Map();
    /** The roles whose functions' on-failure destination each queue is, by the queue's logical id. */
    /** @type {Map<string, string[]>} */
    const queueSenders = new Map();

    for (const [key, fn] of this.functions()) {
      const roleId = this.roleId(key);
      /** @type {unknown[]} */
      const failureQueues = [];
      /** @type {unknown[]} */
      const streams = [];
      const onFailure = /** @type {any} */ (fn.destinations?.onFailure);
      if (onFailure) failureQueues.push(destinationArn(onFailure, key));
      for (const event of fn.events ?? []) {
        if (!event.stream) continue;
        streams.push(typeof event.stream === 'string' ? event.stream : event.stream.arn);
        const streamFailure = event.stream.destinations?.onFailure;
        if (streamFailure) failureQueues.push(destinationArn(streamFailure, key));
      }
      const names = stageRules.effectiveSecrets(fn.secrets ?? [], this.custom.awsSecretSwitches ?? {}, this.target);
      // Keys of the operator's own that a key's setting lists (a replacement key): their use is granted here, in
      // the role; the stack's own key grants it in its key policy (below).
      const externalKeys = Object.entries(fn.keyUse ?? {}).flatMap(([keyId, actions]) => {
        const external = stageRules.keyEnvironment(keyId, keys[keyId]?.override).external;
        return external.length
          ? [{ Effect: 'Allow', Action: actions, Resource: external, Condition: iam.keyCondition(keys[keyId]) }]
          : [];
      });
      resources[roleId] = iam.functionRole({
        logGroupId: naming.getLogGroupLogicalId(key),
        statements: [...iam.flattenStatements(fn.policy), ...externalKeys],
        secrets: names,
        service: service.service,
        stage,
        failureQueues,
        streams,
        inVpc: Boolean(resources[naming.getLambdaLogicalId(key)]?.Properties?.VpcConfig),
        tracing: resources[naming.getLambdaLogicalId(key)]?.Properties?.TracingConfig?.Mode === 'Active',
      });
      for (const queue of failureQueues) {
        const queueId = /** @type {any} */ (queue)?.['Fn::GetAtt']?.[0];
        if (typeof queueId !== 'string') throw new Error(`${key}: an on-failure queue must be !GetAtt <queue>.Arn`);
        queueSenders.set(queueId, [...(queueSenders.get(queueId) ?? []), roleId]);
      }
      for (const [keyId, actions] of Object.entries(fn.keyUse ?? {}))
        keyUsers.set(keyId, [...(keyUsers.get(keyId) ?? []), { roleId, actions }]);
    }

    for (const [queueId, roleIds] of queueSenders)
      resources[`${queueId}Policy`] = iam.failureQueuePolicy(queueId, roleIds);
    for (const [keyId, key] of Object.entries(keys)) {
      if (!resources[keyId]) continue;
      resources[keyId].Properties.KeyPolicy = iam.keyPolicy(keyUsers.get(keyId) ?? [], iam.keyCondition(key));
    }
    // One retention for every log group of the stage: the functions' and the connector's.
    const retention = stageRules.logRetention(this.custom.logRetentionDays);
    for (const resource of Object.values(resources))
      if (resource.Type === 'AWS::Logs::LogGroup' && retention.days)
        resource.Properties = { ...resource.Properties, RetentionInDays: retention.days };
    iam.dropImpliedDependsOn(resources);
  }
}

/**
 * The ARN of an on-failure destination; only an SQS queue is used here.
 * @param {any} destination
 * @param {string} key
 */
function destinationArn(destination, key) {
  if (destination && typeof destination === 'object' && destination.type === 'sqs' && destination.arn)
    return destination.arn;
  throw new Error(`${key}: only an SQS on-failure destination ({ type: sqs, arn }) is supported by plugins/aws-access`);
}

module.exports = AwsAccess;
