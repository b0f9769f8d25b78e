/** Is `host` (a name or an address, IPv6 with or without brackets) this machine's loopback? */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/** The coordinators of `buckley.coordinator.address` (a team's replicas, comma-separated), in the order they are tried. */
export function addressesOf(address: string | undefined): string[] {
  return (address ?? '').split(',').map((one) => one.trim()).filter(Boolean);
}
