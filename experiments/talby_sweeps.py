"""Talby & Feitelson (1999): Table 4 (the priority gap) and the claims the paper's text
makes about the alpha weights and the AWT parameter, rendered from the cached runs."""

from __future__ import annotations

import statistics
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from talby_runs import (
    AWT_FACTORS,
    GAPS,
    HIGH,
    LOW,
    PAPER_TABLE_4,
    PLOTS,
    SWEEP_MACHINE,
    class_wait,
    cons_run,
    gap_label,
    gap_priorities,
    reduction,
    slack_run,
    yearly,
)


def table_4(cache: dict[str, Any]) -> list[str]:
    """Table 4: the yearly average wait against the priority gap, and each group's."""
    out = ["| gap | " + " | ".join(f"{g:g}" for g in GAPS) + " |",
           "|---|" + "---:|" * len(GAPS)]  # fmt: skip
    runs = [slack_run(cache, SWEEP_MACHINE, priorities=gap_priorities(g)) for g in GAPS]
    out.append(f"| all, ours ({SWEEP_MACHINE} procs) | " + " | ".join(
        "–" if r is None else f"{yearly(r):,.0f}" for r in runs) + " |")  # fmt: skip
    out.append("| all, paper | " + " | ".join(f"{PAPER_TABLE_4[g]:,.0f}" for g in GAPS) + " |")
    out.append("| hi-pri, ours | " + " | ".join(
        "–" if r is None or g == 0 else f"{class_wait(r, gap_label(g)):,.0f}"
        for g, r in zip(GAPS, runs, strict=True)) + " |")  # fmt: skip
    out.append("| lo-pri, ours | " + " | ".join(
        "–" if r is None or g == 0 else f"{class_wait(r, LOW):,.0f}"
        for g, r in zip(GAPS, runs, strict=True)) + " |")  # fmt: skip
    return out


def table_alphas(cache: dict[str, Any]) -> list[str]:
    """The paper's alpha test: alpha_p 1, the others 0.2, against all alphas 1."""
    out = ["| alphas | equal: all | unequal: all | hi-pri | lo-pri | gap |",
           "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for alphas, label in (("1", "all 1 (the paper's setting)"),
                          ("p1-rest0.2", "α_p 1, α_u = α_t = α_f = 0.2")):  # fmt: skip
        equal = slack_run(cache, SWEEP_MACHINE, alphas=alphas)
        unequal = slack_run(cache, SWEEP_MACHINE, priorities="every-nth:5", alphas=alphas)
        if equal is None or unequal is None:
            out.append(f"| {label} | (not run yet) | | | | |")
            continue
        hi, lo = class_wait(unequal, HIGH), class_wait(unequal, LOW)
        out.append(f"| {label} | {yearly(equal):,.0f} | {yearly(unequal):,.0f} | {hi:,.0f} "
                   f"| {lo:,.0f} | {lo - hi:,.0f} |")  # fmt: skip
    return out


def _awt_runs(cache: dict[str, Any]) -> list[tuple[float, list[dict[str, Any]]]]:
    found = []
    for factor in AWT_FACTORS:
        awt = "conservative" if factor == 1.0 else f"conservative*{factor:g}"
        run = slack_run(cache, SWEEP_MACHINE, awt=awt)
        if run is not None:
            found.append((factor, run))
    return found


def table_awt(cache: dict[str, Any]) -> list[str]:
    """The AWT sweep: too small collapses to conservative, too large risks starvation."""
    cons = cons_run(cache, SWEEP_MACHINE)
    if cons is None:
        return ["(not run yet)"]
    base = yearly(cons)

    def longest(months: list[dict[str, Any]]) -> float:
        """The monthly longest waits, averaged: what starvation would raise."""
        return statistics.fmean(m["max_wait"] for m in months)

    out = ["| AWT | average wait | vs conservative | longest wait (monthly mean) "
           "| months better than cons |", "|---|---:|---:|---:|---:|"]  # fmt: skip
    out.append(f"| (conservative) | {base:,.0f} | – | {longest(cons):,.0f} | – |")
    rows = [(f"{factor:g} × {base:,.0f} s", run) for factor, run in _awt_runs(cache)]
    monthly = slack_run(cache, SWEEP_MACHINE, awt="monthly")
    if monthly is not None:
        rows.append(("each month's own conservative average", monthly))
    for label, run in rows:
        wait = yearly(run)
        better = sum(s["avg_wait"] < c["avg_wait"] for s, c in zip(run, cons, strict=True))
        out.append(f"| {label} | {wait:,.0f} | {reduction(base, wait)} "
                   f"| {longest(run):,.0f} | {better} of {len(run)} |")  # fmt: skip
    return out


def plot_sweeps(cache: dict[str, Any]) -> None:
    figure, axes = plt.subplots(1, 2, figsize=(12, 4))
    runs = [(g, slack_run(cache, SWEEP_MACHINE, priorities=gap_priorities(g))) for g in GAPS]
    shown = [(g, yearly(r)) for g, r in runs if r is not None]
    axes[0].plot(
        [g for g, _ in shown], [w for _, w in shown], "o-", label=f"ours ({SWEEP_MACHINE})"
    )
    axes[0].plot(list(PAPER_TABLE_4), list(PAPER_TABLE_4.values()), "s--", label="paper")
    axes[0].set_xlabel("priority gap (user + political of every fifth job)")
    axes[0].set_ylabel("yearly average wait (s)")
    axes[0].set_title("Table 4: the cost of priorities")
    awt = _awt_runs(cache)
    cons = cons_run(cache, SWEEP_MACHINE)
    if awt and cons is not None:
        axes[1].semilogx([f for f, _ in awt], [yearly(r) for _, r in awt], "o-", label="slack")
        axes[1].axhline(yearly(cons), color="grey", linestyle=":", label="conservative")
        axes[1].set_xlabel("AWT as a multiple of conservative's average wait")
        axes[1].set_ylabel("yearly average wait (s)")
        axes[1].set_title("The AWT parameter")
    for axis in axes:
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(PLOTS / "talby-feitelson-sweeps.png", dpi=100)
    plt.close(figure)
