'use strict';
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The abuse suite (test/security) runs first: it compares every table, the
 * bucket and the torrent client before and after, so it must run on a stack
 * no other test is writing to. Otherwise jest's own order.
 */
class SecurityFirst extends Sequencer {
  sort(tests) {
    const security = (t) => /[\\/]test[\\/]security[\\/]/.test(t.path);
    const sorted = super.sort(tests);
    return [...sorted.filter(security), ...sorted.filter((t) => !security(t))];
  }
}

module.exports = SecurityFirst;
