import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { TOOL_DYNAMODB_LIMITS } from '../../lib/aws/clients';
import { FailureQueue, Invoke, InvokeRefusedError } from './replay';

/**
 * The ops tools' AWS ports over real clients. Endpoints are not passed: the
 * SDK reads AWS_ENDPOINT_URL_<SERVICE> (DynamoDB Local, offline's Lambda port,
 * moto's SQS) or AWS_ENDPOINT_URL itself, else the region's.
 */

/**
 * The failure queue's client, bounded as an operator tool's (lib/aws/clients.ts,
 * TOOL_DYNAMODB_LIMITS: the longest answer is a 1 s long poll). The SDK's own
 * retries are fine here, unlike the invoke's: every call the replay sends is
 * safe to send again (a receive whose answer was lost only hides its messages
 * until their visibility passes; a delete and a visibility change are
 * idempotent). The endpoint is the
 * configured one even for a `--queue <url>` on another host: the SDK would
 * otherwise send the signed call to whatever host the URL names.
 */
export function createSqsClient(region: string, limits = TOOL_DYNAMODB_LIMITS): SQSClient {
  return new SQSClient({
    region,
    maxAttempts: limits.maxAttempts,
    useQueueUrlAsEndpoint: false,
    requestHandler: {
      connectionTimeout: limits.connectionTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  });
}

export async function sqsQueueUrl(sqs: SQSClient, name: string): Promise<string> {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
  if (!QueueUrl) throw new Error(`SQS gave no URL for the queue ${name}`);
  return QueueUrl;
}

/** SQS always returns a received message's id, receipt handle and body; the SDK types every output member optional. */
export function sqsFailureQueue(sqs: SQSClient, queueUrl: string): FailureQueue {
  return {
    receive: async (max, visibilitySeconds) => {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: max,
          VisibilityTimeout: visibilitySeconds,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount', 'SenderId'],
        }),
      );
      return Messages.map((m) => ({
        id: m.MessageId!,
        receiptHandle: m.ReceiptHandle!,
        body: m.Body ?? '',
        sentAt: m.Attributes?.SentTimestamp ? Number(m.Attributes.SentTimestamp) : undefined,
        receiveCount: m.Attributes?.ApproximateReceiveCount ? Number(m.Attributes.ApproximateReceiveCount) : undefined,
        senderId: m.Attributes?.SenderId,
      }));
    },
    delete: async (receiptHandle) => {
      try {
        await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle }));
      } catch (err) {
        // Another run deleted it first (both received it; the markers let one invoke): it is gone, as wanted.
        // A handle superseded by a later receive leaves the message to that receiver, whose marker check deletes it.
        if ((err as { name?: string }).name !== 'ReceiptHandleIsInvalid') throw err;
      }
    },
    makeVisible: async (receiptHandle) => {
      await sqs.send(
        new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: 0 }),
      );
    },
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
