import fs from 'node:fs';

// Each worker reaches the run's stack through the environment globalSetup wrote.
const file = process.env.TEST_STACK_ENV_FILE;
if (file) Object.assign(process.env, JSON.parse(fs.readFileSync(file, 'utf8')));
