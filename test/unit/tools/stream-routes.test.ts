import { checkpoint, streamRoutes } from '../../../plugins/serverless-offline-dynamodb-streams-bridge/bridge';

describe('the offline stream bridge reads stream events as AWS would', () => {
  const resources = {
    DownloadsTable: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: 'svc-dev-downloads' } },
  };

  it('routes a GetAtt StreamArn event to its function with its batch settings', () => {
    const functions = {
      notify: {
        name: 'svc-dev-notify',
        events: [
          {
            stream: {
              type: 'dynamodb',
              arn: { 'Fn::GetAtt': ['DownloadsTable', 'StreamArn'] },
              batchSize: 10,
              startingPosition: 'LATEST',
              maximumRetryAttempts: 1,
            },
          },
        ],
      },
      other: { name: 'svc-dev-other', events: [{ httpApi: {} }] },
    };
    expect(streamRoutes(functions, resources)).toEqual([
      {
        functionName: 'svc-dev-notify',
        tableName: 'svc-dev-downloads',
        batchSize: 10,
        startingPosition: 'LATEST',
        maximumRetryAttempts: 1,
        reportBatchItemFailures: false,
      },
    ]);
  });

  it('reads functionResponseType ReportBatchItemFailures', () => {
    const functions = {
      notify: {
        name: 'n',
        events: [
          {
            stream: {
              type: 'dynamodb',
              arn: { 'Fn::GetAtt': ['DownloadsTable', 'StreamArn'] },
              functionResponseType: 'ReportBatchItemFailures',
            },
          },
        ],
      },
    };
    expect(streamRoutes(functions, resources)[0].reportBatchItemFailures).toBe(true);
  });

  it('refuses a stream it cannot find locally, by function name', () => {
    const functions = { notify: { name: 'n', events: [{ stream: { type: 'dynamodb', arn: 'arn:aws:dynamodb:…' } }] } };
    expect(() => streamRoutes(functions, resources)).toThrow(/notify: a dynamodb stream event needs/);
  });
});

describe('a partial batch answer (batchItemFailures), as AWS reads it', () => {
  const records = ['100', '200', '300'].map((seq) => ({ dynamodb: { SequenceNumber: seq } }));
  const answer = (body: unknown) => new TextEncoder().encode(JSON.stringify(body));

  it('resumes from the lowest reported sequence number', () => {
    expect(
      checkpoint(answer({ batchItemFailures: [{ itemIdentifier: '300' }, { itemIdentifier: '200' }] }), records),
    ).toBe(1);
  });

  it('is a full success without failures', () => {
    for (const body of [{ batchItemFailures: [] }, {}, null]) expect(checkpoint(answer(body), records)).toBeUndefined();
    expect(checkpoint(undefined, records)).toBeUndefined();
  });

  it('fails the whole batch for an identifier that names no record', () => {
    for (const id of ['', null, '999'])
      expect(() => checkpoint(answer({ batchItemFailures: [{ itemIdentifier: id }] }), records)).toThrow(
        /names no record/,
      );
  });
});
