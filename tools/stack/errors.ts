/** Why a service of the stack did not start. */
export class ServiceStartError extends Error {
  constructor(
    readonly service: string,
    readonly logFile: string,
    reason: string,
  ) {
    super(`${service} failed to start: ${reason} (log: ${logFile})`);
    this.name = 'ServiceStartError';
  }
}

/**
 * The port a service should listen on answers, but from another process
 * (another stack on this machine took it first): the stack never goes on
 * against someone else's DynamoDB, S3, NATS or emulator.
 */
export class PortTakenError extends ServiceStartError {
  constructor(
    service: string,
    logFile: string,
    readonly port: number,
    readonly holder: string,
    hint = 'another stack on this machine?',
  ) {
    super(service, logFile, `port ${port} is held by ${holder}, not by the ${service} this stack started (${hint})`);
    this.name = 'PortTakenError';
  }
}
