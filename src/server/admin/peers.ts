import type { PeerNeed } from '../../task/peer-dependency.js';

/** `/metrics`, on whenever `--admin` is, renders with the optional prom-client package. */
export const METRICS_PEERS: PeerNeed = { packages: ['prom-client'], feature: '/metrics (--admin)' };
