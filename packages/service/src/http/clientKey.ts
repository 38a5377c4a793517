/**
 * Who a request is from, as every per-client limit counts it: the rate limits, the caps on
 * wallet streams and vanity searches, and open connections. An IPv4 address is one client; an
 * IPv6 address counts as its /64 (one subscriber's prefix: a host given a /64 can use any of its
 * 2^64 addresses, so counting single addresses would let it be that many clients); an
 * IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address. The grouping is
 * @fastify/rate-limit's `normalizeIP`, so the limiter's own store and these caps agree.
 */
import rateLimitPlugin from '@fastify/rate-limit';

/** The IPv6 prefix length that makes one client. */
export const IPV6_CLIENT_PREFIX = 64;

/** The client an address belongs to: the IPv4 address, or the first address of the IPv6 /64, in canonical form. */
export function clientKeyOf(address: string): string {
  return rateLimitPlugin.normalizeIP(address, IPV6_CLIENT_PREFIX);
}
