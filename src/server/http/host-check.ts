const LOCAL_NAMES = ['localhost', '127.0.0.1', '[::1]', '::1'];

export function isLoopbackHost(host: string): boolean {
  return LOCAL_NAMES.includes(host);
}

function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1);
  const colon = hostHeader.lastIndexOf(':');
  return colon === -1 ? hostHeader : hostHeader.slice(0, colon);
}

/**
 * DNS-rebinding protection for a server bound to loopback: the Host header, and the Origin
 * when a browser sends one, must name the local machine.
 */
export function hostAllowed(
  allowed: ReadonlySet<string> | undefined,
  host: string | undefined,
  origin: string | undefined,
): boolean {
  if (allowed === undefined) return true;
  if (host === undefined || !allowed.has(hostnameOf(host.toLowerCase()))) return false;
  if (origin === undefined || origin === 'null') return origin === undefined;
  try {
    return (
      allowed.has(new URL(origin).hostname.toLowerCase()) ||
      allowed.has(`[${new URL(origin).hostname}]`)
    );
  } catch {
    return false;
  }
}

/** `name[:port]` or `[v6]:port`: no user info, path, spaces or other URL parts. */
const HOST_SYNTAX = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::(\d{1,5}))?$/;

/**
 * True when a Host header is one host and an optional port (RFC 9110 §7.2). Anything else
 * (`localhost:3000@evil.example`, a path, a port past 65535) is the caller's mistake, answered
 * 400 before any URL is built from it.
 */
export function hostHeaderWellFormed(host: string): boolean {
  const match = HOST_SYNTAX.exec(host);
  if (match === null) return false;
  const port = match[1];
  return port === undefined || Number(port) <= 65535;
}

export function localHostSet(): Set<string> {
  return new Set(LOCAL_NAMES);
}

/** A socket address on the local machine (IPv4 loopback, IPv6 loopback, or IPv4-mapped). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const plain = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return plain === '::1' || plain.startsWith('127.');
}

const LOCAL_SET: ReadonlySet<string> = localHostSet();

/**
 * The host names one request may name: the configured set; else, for a handler mounted in
 * another server, the local names when the request reached a loopback address; else any.
 */
export function hostsFor(
  policy: { allowedHosts?: ReadonlySet<string> | undefined; hostsBySocket?: boolean },
  localAddress: string | undefined,
): ReadonlySet<string> | undefined {
  if (policy.allowedHosts !== undefined) return policy.allowedHosts;
  return policy.hostsBySocket === true && isLoopbackAddress(localAddress) ? LOCAL_SET : undefined;
}
