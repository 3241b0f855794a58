"""moto's server, with AWS's key-state rule for KMS that moto 5.2 lacks.

moto keeps a key's state (DisableKey, ScheduleKeyDeletion) but still encrypts
and decrypts with it. AWS refuses: DisabledException for a disabled key,
KMSInvalidStateException for one pending deletion. This adds exactly that
check to moto's own encrypt (which GenerateDataKey uses) and decrypt, with
AWS's error names and messages; everything else is moto as shipped.
test/integration/secrets/kms-sealer.test.ts checks that moto as shipped still
lacks the rule: when it fails, moto caught up and this file can go.

Usage: python3 moto-kms.py [moto_server's arguments, e.g. -p 5000]
"""

import sys

from moto.core.exceptions import JsonRESTError
from moto.kms import models, utils
from moto.server import main


class DisabledException(JsonRESTError):
    def __init__(self, arn: str) -> None:
        super().__init__("DisabledException", f"{arn} is disabled.")


class KMSInvalidStateException(JsonRESTError):
    def __init__(self, arn: str) -> None:
        super().__init__("KMSInvalidStateException", f"{arn} is pending deletion.")


def refuse_unusable(backend, key_id):
    key = backend.keys.get(key_id)
    if key is None:
        return  # moto answers an unknown key itself
    if key.key_state == "Disabled":
        raise DisabledException(key.arn)
    if key.key_state == "PendingDeletion":
        raise KMSInvalidStateException(key.arn)


moto_encrypt = models.KmsBackend.encrypt
moto_decrypt = models.KmsBackend.decrypt


def encrypt(self, key_id, plaintext, encryption_context):
    refuse_unusable(self, self.any_id_to_key_id(key_id))
    return moto_encrypt(self, key_id, plaintext, encryption_context)


def decrypt(self, ciphertext_blob, encryption_context, key_id=None):
    try:
        named = utils._deserialize_ciphertext_blob(ciphertext_blob).key_id
    except Exception:
        named = None  # garbage: moto's own decrypt answers InvalidCiphertextException
    if named:
        refuse_unusable(self, named)
    return moto_decrypt(self, ciphertext_blob, encryption_context, key_id)


models.KmsBackend.encrypt = encrypt
models.KmsBackend.decrypt = decrypt

if __name__ == "__main__":
    main(sys.argv[1:])
