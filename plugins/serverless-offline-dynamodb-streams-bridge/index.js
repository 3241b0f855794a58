'use strict';
// serverless loads plugins with require(): this shim compiles the TypeScript
// plugin through tsx. Only the local plugin set lists it (serverless.yml).
const { require: tsRequire } = require('tsx/cjs/api');
module.exports = tsRequire('./plugin.ts', __filename).default;
