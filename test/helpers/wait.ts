/** Tests wait on conditions with deadlines, never on fixed sleeps; users get the same helper. */
export { waitFor } from '../../src/testing/support/wait.js';
