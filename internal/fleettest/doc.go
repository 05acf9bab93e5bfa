// Package fleettest holds the end-to-end tests of a server fleet, run by
// make fleet (FLEET=1): servers of example/fleet in network namespaces
// behind a balancer namespace running the nftables ruleset of
// quiclb.NFTablesRuleset, and graceful restarts of a server sharing its
// port through a quic.ReusePortGroup. They need root, ip(8) and nft(8).
package fleettest
