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
