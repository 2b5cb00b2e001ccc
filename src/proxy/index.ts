export { startProxy, type ProxyOptions, type RunningProxy } from './proxy.js';
export { describeUpstream, httpUpstream, parseHeader, type UpstreamSpec } from './upstream-spec.js';
