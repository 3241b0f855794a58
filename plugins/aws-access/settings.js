// @ts-check
'use strict';
/**
 * What plugins/aws-access decides from a stage's settings, as pure functions:
 * what a function's environment carries for its secrets, which deploy settings
 * a stage lacks or gets wrong, the network a function runs in, and its log
 * retention. The plugin (index.js) applies them; test/unit/deploy tests them.
 */

/** @typedef {Record<string, Record<string, string>>} SecretCatalog  name -> { VAR: json key, or '' for the whole string } */

const { URL } = require('node:url');

const SECRET_NAME = /^[a-z0-9][a-z0-9-]*$/;

/**
 * The secrets a function keeps on a target: on `aws` a name with a switch in
 * `switches` stays only while that switch is 'true' (the legacy keyring).
 * @param {string[]} names
 * @param {Record<string, string>} switches
 * @param {string} target
 */
function effectiveSecrets(names, switches, target) {
  if (target !== 'aws') return names;
  return names.filter((name) => !(name in switches) || String(switches[name]) === 'true');
}

/**
 * What a function's environment carries for its secrets: on `aws` the name
 * (`<VAR>_SECRET_ID=<service>/<stage>/<name>[#<key>]`), never the value; locally
 * the value from the environment (as the local stack always gave it).
 * @param {{ names: string[], catalog: SecretCatalog, target: string, service: string, stage: string, env: Record<string, string | undefined> }} input
 * @returns {{ environment: Record<string, string>, problems: string[] }}
 */
function secretEnvironment({ names, catalog, target, service, stage, env }) {
  /** @type {Record<string, string>} */
  const environment = {};
  /** @type {string[]} */
  const problems = [];
  for (const entry of names) {
    const [name, field] = entry.split('#');
    const variables = Object.prototype.hasOwnProperty.call(catalog, name) ? catalog[name] : undefined;
    if (!variables || !SECRET_NAME.test(name)) {
      problems.push(`secret "${name}" is not in custom.secretCatalog`);
      continue;
    }
    const fields = Object.entries(variables).filter(([, key]) => field === undefined || key === field);
    if (fields.length === 0) problems.push(`secret "${name}" has no field "${field}" in custom.secretCatalog`);
    for (const [variable, key] of fields) {
      if (target === 'aws') environment[`${variable}_SECRET_ID`] = `${service}/${stage}/${name}${key ? `#${key}` : ''}`;
      else environment[variable] = env[variable] ?? '';
    }
  }
  return { environment, problems };
}

/**
 * Whether a function runs from the scan image on the aws target: named in `scanImage.functions`, with an image
 * URI set (an ECR URI: `<account>.dkr.ecr.<region>.amazonaws.com/<name>[:tag|@sha256:…]`).
 * @param {string} key
 * @param {{ uri?: unknown, functions?: string[] } | undefined} scanImage
 */
function runsFromImage(key, scanImage) {
  return Boolean(scanImage && String(scanImage.uri ?? '').trim() && (scanImage.functions ?? []).includes(key));
}

const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|localhost|\[?::1\]?|0\.0\.0\.0)$/i;

/** Whether a host name or address is this machine's own. @param {string} host */
function isLoopback(host) {
  return LOOPBACK_HOST.test(host) || /\.localhost$/i.test(host);
}

/**
 * @typedef {{ value?: unknown, schemes?: string[], plaintext?: string[] }} RequiredSetting
 * @typedef {{ value?: unknown, reason: string }} RefusedSetting
 */

/**
 * Every problem with a stage's endpoint settings on the aws target, one per
 * setting, and the warnings of the plaintext opt-out in use.
 * @param {{ required: Record<string, RequiredSetting>, refused?: Record<string, RefusedSetting>, allowPlaintext: boolean, optOutName?: string }} input
 * @returns {{ problems: string[], warnings: string[] }}
 */
function settingProblems({ required, refused = {}, allowPlaintext, optOutName = 'ALLOW_PLAINTEXT_PRIVATE_NETWORK' }) {
  /** @type {string[]} */
  const problems = [];
  /** @type {string[]} */
  const plaintextUsed = [];
  for (const [name, rule] of Object.entries(required)) {
    const value = typeof rule.value === 'string' ? rule.value.trim() : '';
    if (!value) {
      problems.push(`${name} is not set: it has no default on AWS`);
      continue;
    }
    if (!rule.schemes) {
      if (isLoopback(value)) problems.push(`${name} is a loopback name (${value})`);
      continue;
    }
    for (const entry of value.split(',').map((v) => v.trim())) {
      let url;
      try {
        url = new URL(entry);
      } catch {
        problems.push(`${name} is not a URL: ${JSON.stringify(entry)}`);
        continue;
      }
      const scheme = url.protocol.replace(/:$/, '');
      if (isLoopback(url.hostname)) {
        problems.push(`${name} points at a loopback address (${entry}): nothing in Lambda listens there`);
      } else if (rule.schemes.includes(scheme)) {
        continue;
      } else if ((rule.plaintext ?? []).includes(scheme)) {
        if (allowPlaintext) plaintextUsed.push(`${name} (${scheme}://)`);
        else
          problems.push(
            `${name} must be ${rule.schemes.map((s) => `${s}://`).join(' or ')} (got ${scheme}://); ` +
              `on a private network without TLS set ${optOutName}=true`,
          );
      } else {
        problems.push(`${name} must be ${rule.schemes.map((s) => `${s}://`).join(' or ')} (got ${scheme}://)`);
      }
    }
  }
  for (const [name, rule] of Object.entries(refused)) {
    const value = typeof rule.value === 'string' ? rule.value.trim() : '';
    if (value) problems.push(`${name} is set: ${rule.reason}`);
  }
  const warnings = plaintextUsed.length
    ? [
        `${optOutName}=true: ${[...new Set(plaintextUsed)].join(', ')} without TLS. ` +
          'Credentials and T-Bank tokens cross that network in the clear: keep it private.',
      ]
    : [];
  return { problems, warnings };
}

/** A share's path as lib/scan/config.ts reads it: `//host/share[/dir…]` or `\\host\share[\dir…]`. */
const SHARE_PATH = /^(?:\/\/|\\\\)[A-Za-z0-9.-]+[/\\][^/\\]+(?:[/\\][^/\\]+)*[/\\]?$/;

/**
 * The hot folder on AWS is an SMB share, named under the design's SCAN_HOTFOLDER_PATH (SCAN_HOTFOLDER_MODE smb
 * or unset) or its alias SCAN_SMB_SHARE: the names and agreement rule of lib/scan/config.ts, which reads them at
 * run time (this plugin loads no TypeScript); here only what packaging can see (decision 370).
 * @param {{ mode?: unknown, path?: unknown, share?: unknown }} settings
 * @returns {string[]}
 */
function hotFolderProblems({ mode, path, share }) {
  const text = (/** @type {unknown} */ v) => (typeof v === 'string' ? v.trim() : '');
  const [m, p, s] = [text(mode), text(path), text(share)];
  /** @type {string[]} */
  const problems = [];
  if (m && m !== 'smb')
    problems.push(`SCAN_HOTFOLDER_MODE is ${m}: on AWS the hot folder is an SMB share (smb, or leave it unset)`);
  if (!p && !s)
    problems.push(
      'SCAN_SMB_SHARE is not set: it has no default on AWS (or name the share in SCAN_HOTFOLDER_PATH, its design name)',
    );
  if (p && s && p !== s)
    problems.push('SCAN_SMB_SHARE differs from SCAN_HOTFOLDER_PATH (the same setting under its older name): give one');
  for (const [name, value] of [
    ['SCAN_HOTFOLDER_PATH', p],
    ['SCAN_SMB_SHARE', s],
  ])
    if (value && !SHARE_PATH.test(value))
      problems.push(`${name} is not a share path //host/share[/folder…] (got ${value})`);
  return problems;
}

const SUBNET_ID = /^subnet-([0-9a-f]{8}|[0-9a-f]{17})$/;
const SECURITY_GROUP_ID = /^sg-([0-9a-f]{8}|[0-9a-f]{17})$/;

/** @param {unknown} value */
const idList = (value) =>
  String(value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The VPC of the functions marked `privateNetwork`: both settings, or neither.
 * @param {{ subnetIds?: unknown, securityGroupIds?: unknown }} settings
 * @returns {{ vpc?: { subnetIds: string[], securityGroupIds: string[] }, problems: string[] }}
 */
function privateNetwork(settings) {
  const subnetIds = idList(settings.subnetIds);
  const securityGroupIds = idList(settings.securityGroupIds);
  /** @type {string[]} */
  const problems = [];
  if (subnetIds.length === 0 && securityGroupIds.length === 0) return { problems };
  if (subnetIds.length === 0)
    problems.push('VPC_SUBNET_IDS is not set, and VPC_SECURITY_GROUP_IDS is: set both or neither');
  if (securityGroupIds.length === 0)
    problems.push('VPC_SECURITY_GROUP_IDS is not set, and VPC_SUBNET_IDS is: set both or neither');
  for (const id of subnetIds)
    if (!SUBNET_ID.test(id)) problems.push(`VPC_SUBNET_IDS: ${JSON.stringify(id)} is not a subnet id (subnet-…)`);
  for (const id of securityGroupIds)
    if (!SECURITY_GROUP_ID.test(id))
      problems.push(`VPC_SECURITY_GROUP_IDS: ${JSON.stringify(id)} is not a security group id (sg-…)`);
  return problems.length ? { problems } : { vpc: { subnetIds, securityGroupIds }, problems };
}

/**
 * The connector's settings, required only when it is deployed.
 * @param {Record<string, unknown>} settings
 */
function connectorProblems(settings) {
  /** @type {string[]} */
  const problems = [];
  for (const [name, value] of Object.entries(settings)) {
    if (!String(value ?? '').trim()) problems.push(`${name} is not set (NATS_CONNECTOR_DEPLOY=true needs it)`);
  }
  for (const id of idList(settings.NATS_CONNECTOR_SUBNETS))
    if (!SUBNET_ID.test(id))
      problems.push(`NATS_CONNECTOR_SUBNETS: ${JSON.stringify(id)} is not a subnet id (subnet-…)`);
  for (const id of idList(settings.NATS_CONNECTOR_SECURITY_GROUP))
    if (!SECURITY_GROUP_ID.test(id))
      problems.push(`NATS_CONNECTOR_SECURITY_GROUP: ${JSON.stringify(id)} is not a security group id (sg-…)`);
  return problems;
}

// What CloudWatch Logs accepts (PutRetentionPolicy).
const RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

/** @param {unknown} value @returns {{ days?: number, problem?: string }} */
function logRetention(value) {
  const days = Number(String(value ?? '').trim());
  if (RETENTION_DAYS.includes(days)) return { days };
  return {
    problem: `LOG_RETENTION_DAYS must be one of CloudWatch's ${RETENTION_DAYS.join(', ')} (got ${JSON.stringify(value)})`,
  };
}

/**
 * A stage whose alarms would notify nobody (docs/operations.md): refused when
 * the stage is not a disposable one (`required`: its tables are protected),
 * unless ALARM_EMAILS is `none`, the operator's word that the topic has other
 * subscribers (a pager, a chat), which is said as a warning.
 * @param {{ emails: unknown, required: unknown }} input
 * @returns {{ problem?: string, warning?: string }}
 */
function alarmSubscribers({ emails, required }) {
  const text = String(emails ?? '').trim();
  if (String(required) !== 'true' || (text && text !== 'none')) return {};
  if (text === 'none')
    return {
      warning:
        'ALARM_EMAILS=none: no address is subscribed to the alarm topic; subscribe your pager or chat to it (docs/operations.md#alarms), or no alarm reaches anyone',
    };
  return {
    problem:
      'ALARM_EMAILS is not set: every alarm would notify a topic nobody subscribes to. Give the on-call addresses (comma-separated), or ALARM_EMAILS=none if you subscribe the topic yourself (docs/operations.md#alarms)',
  };
}

/**
 * What a stage of the runbook's would deploy that cannot work as the scan
 * gateway expects (docs/deploy.md, "The SMB hot folder on AWS"), said as
 * warnings: packaging goes on, since a first deploy without the image or the
 * network is how the runbook starts.
 * @param {{ scanImage?: { uri?: unknown, functions?: string[] }, vpc?: unknown }} input
 * @returns {string[]}
 */
function scanGatewayWarnings({ scanImage, vpc }) {
  const functions = (scanImage?.functions ?? []).join(', ');
  /** @type {string[]} */
  const warnings = [];
  if (!String(scanImage?.uri ?? '').trim())
    warnings.push(
      `SCAN_FUNCTIONS_IMAGE is not set: ${functions} are packaged as zips, which have no smbclient; they answer every scan request "hot folder unavailable" and the healthcheck says hotfolder: down until they run from the scan image (docs/deploy.md, The SMB hot folder on AWS)`,
    );
  if (!vpc)
    warnings.push(
      'VPC_SUBNET_IDS and VPC_SECURITY_GROUP_IDS are not set: the functions that reach NATS, the torrent client and the SMB share run outside any VPC and reach none of those private hosts (docs/deploy.md section 3, Networks)',
    );
  return warnings;
}

const KEY_ARN = /^arn:aws(-[a-z]+)*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]{1,64}$/;

/**
 * The keys a function that uses a key of custom.keys is given, newest first
 * (the first seals, every one opens): the stack's own key alone, unless the
 * key's `override` setting lists them (docs/security.md, "Replacing the KMS
 * key"): key ARNs of your own, and the key's logical id for the stack's key.
 * @param {string} keyId
 * @param {unknown} override
 * @returns {{ value: unknown, external: string[], problems: string[] }}
 */
function keyEnvironment(keyId, override) {
  const own = { 'Fn::GetAtt': [keyId, 'Arn'] };
  const text = String(override ?? '').trim();
  if (!text) return { value: own, external: [], problems: [] };
  const entries = text.split(',').map((e) => e.trim());
  /** @type {string[]} */
  const problems = [];
  for (const entry of entries)
    if (entry !== keyId && !KEY_ARN.test(entry))
      problems.push(
        `${JSON.stringify(entry)} is neither a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>) nor ${keyId}`,
      );
  if (new Set(entries).size < entries.length) problems.push('names a key twice');
  const parts = entries.map((e) => (e === keyId ? own : e));
  return {
    value: parts.length === 1 ? parts[0] : { 'Fn::Join': [',', parts] },
    external: entries.filter((e) => e !== keyId),
    problems,
  };
}

module.exports = {
  alarmSubscribers,
  scanGatewayWarnings,
  keyEnvironment,
  runsFromImage,
  effectiveSecrets,
  secretEnvironment,
  isLoopback,
  settingProblems,
  hotFolderProblems,
  privateNetwork,
  connectorProblems,
  logRetention,
};
