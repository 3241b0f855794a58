#!/bin/sh
# The locally made Lambda base's entry point (tools/images/bases.ts; decision 451), in the place and with the
# contract of Lambda's own /lambda-entrypoint.sh: its one argument is the handler (the image's CMD, or the
# function's ImageConfig.Command), which Lambda's Node.js runtime interface client loads from LAMBDA_TASK_ROOT and
# serves through the Runtime API at AWS_LAMBDA_RUNTIME_API. Lambda's base falls back to its runtime interface
# emulator when that variable is unset; this one carries none (it is not a Debian or npm package), so it says so.
if [ "$#" -ne 1 ]; then
  echo "usage: /lambda-entrypoint.sh <handler> (the image's CMD)" >&2
  exit 2
fi
if [ -z "${AWS_LAMBDA_RUNTIME_API:-}" ]; then
  echo "AWS_LAMBDA_RUNTIME_API is not set: this base has no runtime interface emulator; run it against a Runtime API" >&2
  exit 2
fi
export _HANDLER="$1"
exec /var/lang/bin/node /var/runtime/index.mjs
