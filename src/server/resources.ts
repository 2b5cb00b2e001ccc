/** For the proxy: its upstream's resources, answered beside taskrail's own task resources. */
export { passResourcesThrough, type PassedThroughResources } from './sdk/task-resources.js';
