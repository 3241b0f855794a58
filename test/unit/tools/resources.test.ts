import { planResources, UnsupportedResourceError } from '../../../tools/stack/resources';

const table = {
  Type: 'AWS::DynamoDB::Table',
  Properties: {
    TableName: 't1',
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'PK', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'PK', KeyType: 'HASH' }],
    TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
    PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
  },
};

describe('planResources', () => {
  it('maps tables (with TTL), buckets, and ignores what a local stack does not need', () => {
    const plan = planResources({
      T: table,
      B: { Type: 'AWS::S3::Bucket', Properties: { BucketName: 'b1' } },
      Role: { Type: 'AWS::IAM::Role', Properties: {} },
    });
    expect(plan.tables).toEqual([
      {
        logicalId: 'T',
        create: {
          TableName: 't1',
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'PK', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'PK', KeyType: 'HASH' }],
        },
        ttlAttribute: 'expires_at',
      },
    ]);
    expect(plan.buckets).toEqual([{ logicalId: 'B', name: 'b1' }]);
    expect(plan.ignored).toEqual(['Role']);
  });

  it('refuses a table property it cannot reproduce locally instead of dropping it', () => {
    const bad = { ...table, Properties: { ...table.Properties, KinesisStreamSpecification: {} } };
    expect(() => planResources({ T: bad })).toThrow(/KinesisStreamSpecification/);
  });

  it('refuses names that are not literal (unresolved intrinsics)', () => {
    const bad = { ...table, Properties: { ...table.Properties, TableName: { Ref: 'X' } } };
    expect(() => planResources({ T: bad })).toThrow(UnsupportedResourceError);
    expect(() => planResources({ B: { Type: 'AWS::S3::Bucket', Properties: {} } })).toThrow(/BucketName/);
  });
});
