import { it } from 'node:test';
import { stopWhileCutOff } from '../partitions/stop-cut.js';
import { partitionSuite } from '../partitions/suite.js';

/** `taskrail serve` stopped with SIGTERM while its link to PostgreSQL is blackholed. */
partitionSuite('postgres', 'PostgreSQL partitions: a server stopped while cut off', (suite) => {
  it('serve --no-worker exits within the stop bound', () => stopWhileCutOff(suite.kit, false));

  it('serve running a task exits within the stop bound', () => stopWhileCutOff(suite.kit, true));
});
