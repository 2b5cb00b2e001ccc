export { packageVersion } from '../client/package-version.js';
