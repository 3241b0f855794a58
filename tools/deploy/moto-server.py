"""moto's server, with the three fixes the deploy test needs (tools/deploy/moto.ts starts it).

moto 5.2's CloudFormation creates an AWS::KMS::Key with its KeyPolicy as the
template gives it: a JSON object (CloudFormation accepts an object or a string).
moto's KMS keeps a key's policy as a string, and its policy check
(`json.loads(key.policy)`) then fails with a TypeError on every call that names
the key, DescribeKey, GenerateDataKey, Decrypt and GetKeyPolicy included: HTTP
500 with an HTML page. AWS stores the object as a JSON document. This writes it
as one, as moto's own CreateKey does.

moto 5.2's CloudFormation has no model for AWS::SQS::QueuePolicy: it lists the
resource with no type and goes on, and the queue keeps no policy. CloudFormation
sets the document as each named queue's `Policy` attribute (SetQueueAttributes);
this model does the same, so GetQueueAttributes answers the policy the stack
gave the failure queue. moto stores a queue policy and does not enforce it.

moto 5.2 keeps an inline policy of an AWS::IAM::Role created by CloudFormation
as the template's object, and GetRolePolicy then answers its Python repr
(`{'Version': …}`), which no JSON reader parses. AWS stores and answers the
document as JSON; this writes it as JSON, as moto's own PutRolePolicy does.

Everything else is moto as shipped. test/aws/deploy.test.ts checks that moto as
shipped still lacks each: when those tests fail, moto caught up and the patch
can go.

Usage: python3 moto-server.py [moto_server's arguments, e.g. -H 127.0.0.1 -p 5000]
"""

import json
import sys

from moto.core.common_models import CloudFormationModel
from moto.iam import models as iam_models
from moto.kms import models
from moto.server import main
from moto.sqs.models import sqs_backends

moto_create_key = models.Key.create_from_cloudformation_json.__func__


def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
    properties = cloudformation_json.get("Properties", {})
    if isinstance(properties.get("KeyPolicy"), dict):
        properties = {**properties, "KeyPolicy": json.dumps(properties["KeyPolicy"])}
        cloudformation_json = {**cloudformation_json, "Properties": properties}
    return moto_create_key(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)


models.Key.create_from_cloudformation_json = classmethod(create_from_cloudformation_json)

moto_put_role_policy = iam_models.Role.put_policy


def put_role_policy(self, policy_name, policy_json):
    text = policy_json if isinstance(policy_json, str) else json.dumps(policy_json)
    moto_put_role_policy(self, policy_name, text)


iam_models.Role.put_policy = put_role_policy


class QueuePolicy(CloudFormationModel):
    """AWS::SQS::QueuePolicy: `PolicyDocument` set as the `Policy` of each queue of `Queues` (their URLs)."""

    # moto's model class reads its service from its module's name (moto.<service>.models), when it is made.
    __module__ = "moto.sqs.models"

    def __init__(self, name, queues):
        self.name = name
        self.queues = queues

    @property
    def physical_resource_id(self):
        return self.name

    @staticmethod
    def cloudformation_name_type():
        return ""

    @staticmethod
    def cloudformation_type():
        return "AWS::SQS::QueuePolicy"

    @classmethod
    def has_cfn_attr(cls, attr):
        return False

    @classmethod
    def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        properties = cloudformation_json["Properties"]
        document = properties["PolicyDocument"]
        text = document if isinstance(document, str) else json.dumps(document)
        backend = sqs_backends[account_id][region_name]
        for url in properties["Queues"]:
            backend.get_queue(url.rstrip("/").split("/")[-1]).policy = text
        return cls(resource_name, properties["Queues"])

    @classmethod
    def update_from_cloudformation_json(
        cls, original_resource, new_resource_name, cloudformation_json, account_id, region_name
    ):
        return cls.create_from_cloudformation_json(new_resource_name, cloudformation_json, account_id, region_name)

    @classmethod
    def delete_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name):
        backend = sqs_backends[account_id][region_name]
        for url in cloudformation_json["Properties"]["Queues"]:
            queue = backend.queues.get(url.rstrip("/").split("/")[-1])
            if queue is not None:
                queue.policy = None



if __name__ == "__main__":
    main(sys.argv[1:])
