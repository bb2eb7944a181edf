"""Placement simulation: `python -m lamar.bench.placement` prints the per-node load of 10 000 agents
over 100 namespaces on N database nodes, namespaces placed by hash (as Citus places a distribution
column) beside a greedy placement (largest namespace first, onto the least-loaded node)."""

from __future__ import annotations

import argparse
import math
import random
import sys
import zlib

from lamar.bench.arguments import positive

NODES = (2, 4, 8, 16)


def team_sizes(agents: int, namespaces: int, skew: float, seed: int) -> list[int]:
    """Agents per namespace: Zipf(skew) shares of `agents` (a few large teams, many small ones),
    every namespace at least one agent."""
    weights = [1.0 / (rank ** skew) for rank in range(1, namespaces + 1)]
    total = sum(weights)
    sizes = [max(1, int(agents * w / total)) for w in weights]
    rng = random.Random(seed)
    while sum(sizes) < agents:  # hand out the rounding remainder
        sizes[rng.randrange(namespaces)] += 1
    while sum(sizes) > agents:
        i = rng.randrange(namespaces)
        if sizes[i] > 1:
            sizes[i] -= 1
    return sizes


def episode_rates(sizes: list[int], seed: int) -> list[float]:
    """Episodes per second per namespace, its load: each agent runs 0.2-2 episodes a minute."""
    rng = random.Random(seed + 1)
    return [sum(rng.uniform(0.2, 2.0) / 60.0 for _ in range(n)) for n in sizes]


def hash_placement(names: list[str], nodes: int, shards: int = 32) -> list[int]:
    """Citus-like: the namespace hashes to one of `shards` shards, shards go round-robin to nodes."""
    return [(zlib.crc32(name.encode()) % shards) % nodes for name in names]


def greedy_placement(loads: list[float], nodes: int) -> list[int]:
    """Largest namespace first, each onto the node with the least load so far (LPT)."""
    placed = [0] * len(loads)
    node_load = [0.0] * nodes
    for i in sorted(range(len(loads)), key=lambda i: -loads[i]):
        target = min(range(nodes), key=lambda n: node_load[n])
        placed[i] = target
        node_load[target] += loads[i]
    return placed


def per_node(loads: list[float], placement: list[int], nodes: int) -> list[float]:
    """The load of each node: the sum of the loads of the namespaces placed on it.

    A namespace is the unit of placement: its events, lesson rows and spread counters live on one
    node, so everything within a namespace stays one transaction on one server.
    """
    out = [0.0] * nodes
    for load, node in zip(loads, placement, strict=True):
        out[node] += load
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.bench.placement", description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--namespaces", type=int, default=100)
    parser.add_argument("--skew", type=float, default=1.0, help="Zipf exponent of team sizes")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    positive(parser, namespaces=args.namespaces)
    if args.agents < args.namespaces or not math.isfinite(args.skew) or args.seed < 0:
        parser.error(f"--agents is at least --namespaces ({args.namespaces}): every namespace has one agent or more; "
                     "--skew is a finite number and --seed at least 0")
    sizes = team_sizes(args.agents, args.namespaces, args.skew, args.seed)
    rates = episode_rates(sizes, args.seed)
    names = [f"team-{i:03d}" for i in range(args.namespaces)]
    total = sum(rates)
    print(f"{args.agents} agents over {args.namespaces} namespaces (Zipf {args.skew:g}): largest team "
          f"{max(sizes)} agents ({max(rates) / total:.1%} of the load), median {sorted(sizes)[len(sizes) // 2]}; "
          f"{total:.0f} episodes/s in all")
    print(f"{'nodes':>5}  {'placement':<9} {'episodes/s per node (sorted, highest first)':<58} {'max/mean':>8}")
    for nodes in NODES:
        for name, placement in (("hash", hash_placement(names, nodes)), ("greedy", greedy_placement(rates, nodes))):
            load = sorted(per_node(rates, placement, nodes), reverse=True)
            shown = " ".join(f"{x:.0f}" for x in load[:8]) + (" ..." if nodes > 8 else "")
            print(f"{nodes:>5}  {name:<9} {shown:<58} {max(load) / (total / nodes):>8.2f}")
    floor = max(rates) / (total / max(NODES))
    print(f"no placement of whole namespaces can go below max/mean {floor:.2f} on {max(NODES)} nodes: "
          "the largest namespace is one node's work (split it into namespaces to go further)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
