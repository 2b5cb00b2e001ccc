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

/** What the Host check makes of a request: HTTP 400 for `malformed`, 403 for `forbidden`. */
export type HostVerdict = 'ok' | 'malformed' | 'forbidden';

/**
 * Verdicts already reached on a Host header sent without an Origin, per allowed set: a client
 * sends the same Host on every request. Past the limit (many distinct names) they start over.
 */
const verdicts = new WeakMap<object, Map<string, HostVerdict>>();
const ANY_HOST = {};
const MAX_REMEMBERED_HOSTS = 256;

/**
 * The Host check of every request: `hostHeader` as sent (its syntax is checked), `host` the
 * name the request is for (a fetch request without the header: its URL's), then
 * `hostAllowed`.
 */
export function hostVerdict(
  allowed: ReadonlySet<string> | undefined,
  hostHeader: string | undefined,
  host: string | undefined,
  origin: string | undefined,
): HostVerdict {
  if (hostHeader === undefined || host !== hostHeader || origin !== undefined) {
    return judgeHost(allowed, hostHeader, host, origin);
  }
  const set = allowed ?? ANY_HOST;
  let known = verdicts.get(set);
  if (known === undefined) verdicts.set(set, (known = new Map()));
  const remembered = known.get(hostHeader);
  if (remembered !== undefined) return remembered;
  const verdict = judgeHost(allowed, hostHeader, host, undefined);
  if (known.size >= MAX_REMEMBERED_HOSTS) known.clear();
  known.set(hostHeader, verdict);
  return verdict;
}

function judgeHost(
  allowed: ReadonlySet<string> | undefined,
  hostHeader: string | undefined,
  host: string | undefined,
  origin: string | undefined,
): HostVerdict {
  if (hostHeader !== undefined && !hostHeaderWellFormed(hostHeader)) return 'malformed';
  return hostAllowed(allowed, host, origin) ? 'ok' : 'forbidden';
}
