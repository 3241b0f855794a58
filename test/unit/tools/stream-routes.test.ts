import { streamRoutes } from '../../../plugins/serverless-offline-dynamodb-streams-bridge/bridge';

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
      },
    ]);
  });

  it('refuses a stream it cannot find locally, by function name', () => {
    const functions = { notify: { name: 'n', events: [{ stream: { type: 'dynamodb', arn: 'arn:aws:dynamodb:…' } }] } };
    expect(() => streamRoutes(functions, resources)).toThrow(/notify: a dynamodb stream event needs/);
  });
});
