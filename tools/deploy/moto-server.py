"""moto's server, with the one fix the deploy test needs (tools/deploy/moto.ts starts it).

moto 5.2's CloudFormation creates an AWS::KMS::Key with its KeyPolicy as the
template gives it: a JSON object (CloudFormation accepts an object or a string).
moto's KMS keeps a key's policy as a string, and its policy check
(`json.loads(key.policy)`) then fails with a TypeError on every call that names
the key, DescribeKey, GenerateDataKey, Decrypt and GetKeyPolicy included: HTTP
500 with an HTML page. AWS stores the object as a JSON document. This writes it
as one, as moto's own CreateKey does; everything else is moto as shipped.
test/aws/deploy.test.ts checks that moto as shipped still fails: when that test
fails, moto caught up and this patch can go.

Usage: python3 moto-server.py [moto_server's arguments, e.g. -H 127.0.0.1 -p 5000]
"""

import json
import sys

from moto.kms import models
from moto.server import main

moto_create_key = models.Key.create_from_cloudformation_json.__func__


def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
    properties = cloudformation_json.get("Properties", {})
    if isinstance(properties.get("KeyPolicy"), dict):
        properties = {**properties, "KeyPolicy": json.dumps(properties["KeyPolicy"])}
        cloudformation_json = {**cloudformation_json, "Properties": properties}
    return moto_create_key(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)


models.Key.create_from_cloudformation_json = classmethod(create_from_cloudformation_json)

if __name__ == "__main__":
    main(sys.argv[1:])
