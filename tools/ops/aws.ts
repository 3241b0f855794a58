import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { Credentials } from './sigv4';
import { SqsClient } from './sqs';
import { FailureQueue, Invoke, InvokeRefusedError } from './replay';

/**
 * The ops tools' AWS ports over real clients. Endpoints follow the SDK's
 * convention everywhere: AWS_ENDPOINT_URL_<SERVICE> (DynamoDB Local, offline's
 * Lambda port, moto's SQS), else the region's.
 */

/** The SDK's default credential chain (environment, profile, SSO, instance role), as every client of ours uses it. */
export function defaultCredentials(region: string): () => Promise<Credentials> {
  const client = new LambdaClient({ region });
  return async () => {
    const c = await client.config.credentials();
    return { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken };
  };
}

export function sqsClient(region: string, env: NodeJS.ProcessEnv = process.env): SqsClient {
  return new SqsClient({
    region,
    endpoint: env.AWS_ENDPOINT_URL_SQS || env.AWS_ENDPOINT_URL || undefined,
    credentials: defaultCredentials(region),
  });
}

export function sqsFailureQueue(sqs: SqsClient, queueUrl: string): FailureQueue {
  return {
    receive: async (max, visibilitySeconds) =>
      (await sqs.receive(queueUrl, max, visibilitySeconds, 1)).map((m) => ({
        id: m.MessageId,
        receiptHandle: m.ReceiptHandle,
        body: m.Body,
        sentAt: m.Attributes?.SentTimestamp ? Number(m.Attributes.SentTimestamp) : undefined,
        receiveCount: m.Attributes?.ApproximateReceiveCount ? Number(m.Attributes.ApproximateReceiveCount) : undefined,
      })),
    delete: (receiptHandle) => sqs.deleteMessage(queueUrl, receiptHandle),
    makeVisible: (receiptHandle) => sqs.changeVisibility(queueUrl, receiptHandle, 0),
  };
}

/**
 * `InvocationType: Event`, sent ONCE: the SDK's own retry would send a second
 * invoke after a lost answer (lib/aws/invoke.ts allows that; a replay must
 * not). A 4xx is Lambda's refusal (nothing queued); anything else unknown.
 */
export function lambdaAsyncInvoke(region: string): { invoke: Invoke; close: () => void } {
  const lambda = new LambdaClient({
    region,
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 3000, requestTimeout: 15_000, throwOnRequestTimeout: true },
  });
  const invoke: Invoke = async ({ functionName, qualifier }, payload) => {
    let out;
    try {
      out = await lambda.send(
        new InvokeCommand({
          FunctionName: functionName,
          Qualifier: qualifier,
          InvocationType: 'Event',
          Payload: new TextEncoder().encode(JSON.stringify(payload)),
        }),
      );
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status !== undefined && status >= 400 && status < 500)
        throw new InvokeRefusedError((err as Error).name, (err as Error).message);
      throw err;
    }
    if (out.StatusCode !== 202) throw new Error(`invoke ${functionName} answered ${out.StatusCode}, not 202`);
    return { requestId: out.$metadata.requestId };
  };
  return { invoke, close: () => lambda.destroy() };
}
