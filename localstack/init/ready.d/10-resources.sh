#!/bin/bash
# Creates the service's tables and buckets from the template exported from
# serverless.yml (npm run localstack:template): the same single definition
# the embedded stack bootstraps from.
set -euo pipefail
template=/etc/localstack/init/template/resources.json
if [ ! -f "$template" ]; then
  echo "resources.json missing: run 'npm run localstack:template' on the host first" >&2
  exit 1
fi
awslocal cloudformation deploy --stack-name torrent-scan-sync-resources --template-file "$template"
echo "resources created from $template"
