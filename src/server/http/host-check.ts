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
