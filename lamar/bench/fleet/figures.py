"""The fleet's figures: one flat row from what the clients measured, the lines printed for it,
and the comparisons between rows (flatness across client counts, each mode over the log mode's)."""

from __future__ import annotations

import os
import statistics
from typing import Any


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarize(segments: list[dict[str, Any]]) -> dict[str, Any]:
    """One flat row of figures from the segments of one row (its configuration run one or more
    times): episodes/s over their total time, latency percentiles and CPU over all their episodes."""
    collected = [c for segment in segments for c in segment["collected"]]
    seconds = sum(segment["seconds"] for segment in segments)
    took = [x for t, *_ in collected for x in t]
    each = [x for *_, e in collected for x in e]
    ms = 1000.0
    row = {
        **{key: segments[0][key] for key in ("mode", "workload", "clients", "busy", "processes", "threads")},
        "segments": len(segments), "seconds": seconds, "episodes": len(took),
        "episodes_per_s": len(took) / seconds,
        "episode_p50_ms": statistics.median(took) * ms, "episode_p99_ms": pct(took, 0.99) * ms,
        "client_cpu_ms": statistics.mean(cpu / len(t) for t, cpu, *_ in collected if t) * ms,
        "server_cpu_ms": sum(server for _, _, server, *_ in collected) / max(len(took), 1) * ms,
        "conflicts_per_episode": sum(r[0] for *_, r, _ in collected) / max(len(took), 1),
        "queued_per_episode": sum(r[2] for *_, r, _ in collected) / max(len(took), 1),
        "locked_per_episode": sum(r[1] for *_, r, _ in collected) / max(len(took), 1),
        "load": statistics.mean(segment["load"] for segment in segments),
    }
    if len(each) > 1:  # paced: each episode's CPU, so that a row's mean comes with its 95 % interval
        for i, side in enumerate(("client", "server")):
            row[f"{side}_cpu_ms"], row[f"{side}_cpu_ci_ms"] = mean_interval([e[i] * ms for e in each])
    return row


def mean_interval(samples: list[float]) -> tuple[float, float]:
    """The mean of `samples` and the half-width of its 95 % confidence interval (normal
    approximation, 1.96 standard errors; episodes taken as independent draws)."""
    return statistics.mean(samples), 1.96 * statistics.stdev(samples) / len(samples) ** 0.5


def flatness(rows: list[dict[str, Any]], side: str = "client") -> list[str]:
    """For each workload and mode of paced `rows`, how far apart its rows' CPU per episode (`side`)
    lie: the highest mean over the lowest, with the range that ratio takes between the ends of
    the two rows' 95 % intervals."""
    out = []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if f"{side}_cpu_ci_ms" in r and not r["busy"]:
            groups.setdefault((r["workload"], r["mode"]), []).append(r)
    for (workload, mode), group in groups.items():
        if len(group) < 2:
            continue
        key, ci = f"{side}_cpu_ms", f"{side}_cpu_ci_ms"
        low, high = min(group, key=lambda r: r[key]), max(group, key=lambda r: r[key])
        floor = low[key] - low[ci]
        top = "inf" if floor <= 0 else f"{(high[key] + high[ci]) / floor:.2f}"
        out.append(f"{workload:<9}{mode:<10}{side + ' CPU':<12}{low[key]:>6.2f} ms ({low['clients']:>2} clients) to "
                   f"{high[key]:>5.2f} ms ({high['clients']:>2}): x{high[key] / low[key]:.2f}, "
                   f"95 % intervals x{max(high[key] - high[ci], 0.0) / (low[key] + low[ci]):.2f} to x{top}")
    return out


def describe_machine(url: str) -> str:
    import psycopg

    load = os.getloadavg()[0]
    line = f"{os.cpu_count()} CPUs, load average {load:.1f}"
    with psycopg.connect(url.split("?", 1)[0]) as conn:
        row = conn.execute("SELECT current_setting('server_version'), current_setting('synchronous_commit')"
                           ).fetchone()
    if row:
        line += f"; PostgreSQL {row[0]} (synchronous_commit={row[1]}) on {url.split('@')[-1].split('?')[0]}"
    return line


HEADER = (f"{'workload':<9}{'mode':<10}{'clients':>8}{'procs x thr':>13}{'episodes/s':>12}{'p50 ms':>9}{'p99 ms':>9}"
           f"{'client CPU ms':>15}{'server CPU ms':>15}{'retries':>9}{'queued':>8}{'load':>6}")


def row_line(row: dict[str, Any]) -> str:
    client, server = (f"{row[f'{side}_cpu_ms']:.2f}" + (f" ±{row[f'{side}_cpu_ci_ms']:.2f}"
                                                         if f"{side}_cpu_ci_ms" in row else "")
                      for side in ("client", "server"))
    return (f"{row['workload']:<9}{row['mode']:<10}{row['clients']:>8}{row['processes']:>8} x {row['threads']:<2}"
            f"{row['episodes_per_s']:>12.0f}{row['episode_p50_ms']:>9.1f}{row['episode_p99_ms']:>9.1f}"
            f"{client:>15}{server:>15}"
            f"{row['conflicts_per_episode']:>9.3f}{row['queued_per_episode']:>8.2f}{row['load']:>6.1f}")


def mode_ratios(rows: list[dict[str, Any]], modes: list[str]) -> list[str]:
    """Each mode's episodes/s, p99 and CPU per episode over the log mode's, measured next to each other."""
    base = {(r["workload"], r["clients"]): r for r in rows if r["mode"] == "log" and not r["busy"]}
    out = []
    for mode in [m for m in modes if m != "log"]:
        for r in rows:
            other = base.get((r["workload"], r["clients"]))
            if r["mode"] == mode and not r["busy"] and other is not None and other["episodes_per_s"]:
                cpu = r["client_cpu_ms"] + r["server_cpu_ms"]
                out.append(f"{r['workload']:<9}{mode + '/log':<14}{r['clients']:>8}"
                           f"{r['episodes_per_s'] / other['episodes_per_s']:>13.2f}"
                           f"{r['episode_p99_ms'] / max(other['episode_p99_ms'], 1e-9):>13.2f}"
                           f"{cpu / max(other['client_cpu_ms'] + other['server_cpu_ms'], 1e-9):>13.2f}")
    return out
