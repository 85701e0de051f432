"""Reproduce Talby & Feitelson (1999), Tables 1, 2, 3 and 5: slack-based backfilling on KTH.

Every calendar month of the cleaned KTH SP2 trace is replayed separately from an empty
machine with the users' estimates (jobs that overrun are killed), as in the paper, on
both 100 processors (what the KTH SP2 had) and 128 (what the paper says). Yearly
averages are total wait over total jobs, as the paper computes them.

* Table 1: conservative against slack (AST, all alphas 1, SF 3, equal priorities).
* Table 2: slack factor 1, 3, ..., 11.
* Table 3: every fifth job user and political priority 1, the others 0.
* Table 5: the five permutation heuristics, with equal and unequal priorities.

AWT is the yearly average wait of conservative backfilling on the same machine (the
paper's method: it used 2,401 s, its own conservative figure); one extra run per machine
size uses the paper's 2,401 s literally. Every run is cached in
``experiments/results/talby-feitelson.json``; ``--render`` only redraws the page.

    .venv/bin/python experiments/talby_feitelson.py      # or: make reproduce-talby
"""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from harness import load_cache, parse_arguments, run_missing, start_cache, write_generated
from talby_runs import (
    CACHE,
    HEURISTICS,
    HIGH,
    LOW,
    MACHINES,
    PAGE,
    PAPER_AWT,
    PAPER_TABLE_1,
    PAPER_TABLE_1_AVERAGE,
    PAPER_TABLE_2,
    PAPER_TABLE_3,
    PAPER_TABLE_3_AVERAGE,
    PAPER_TABLE_5,
    PLOTS,
    SLACK_FACTORS,
    SWEEP_MACHINE,
    class_wait,
    configurations,
    cons_run,
    reduction,
    run_one,
    slack_run,
    task_key,
    tasks,
    yearly,
)
from talby_sweeps import plot_sweeps, table_4, table_alphas, table_awt


# ------------------------------------------------------------------------- rendering
def _table_1(cache: dict[str, Any], baseline: str = "conservative") -> list[str]:
    """Table 1: slack against ``baseline`` month by month on both machines. Against
    conservative (the paper's table) with the jobs and the paper's columns; against
    EASY (the paper states that gain in its text only) with a count of months won."""
    paper = baseline == "conservative"
    name = "cons" if paper else "EASY"
    head = (
        "| month | "
        + ("jobs | " if paper else "")
        + " | ".join(f"{name} {m} | slack {m} | red." for m in MACHINES)
    )
    head += " | paper cons | paper slack | paper red. |" if paper else " |"
    columns = 1 + int(paper) + 3 * len(MACHINES) + (3 if paper else 0)
    out = [head, "|---|" + "---:|" * (columns - 1)]
    runs = {m: (cons_run(cache, m, baseline), slack_run(cache, m)) for m in MACHINES}
    if any(b is None or s is None for b, s in runs.values()):
        return ["(not run yet)"]
    months = runs[MACHINES[0]][0]
    assert months is not None
    better = dict.fromkeys(MACHINES, 0)
    for index, month in enumerate(months):
        cells = [month["label"]] + ([f"{month['jobs']:,}"] if paper else [])
        for machine in MACHINES:
            base, slack = runs[machine]
            assert base is not None
            assert slack is not None
            b, s = base[index]["avg_wait"], slack[index]["avg_wait"]
            better[machine] += s < b
            cells += [f"{b:,.1f}", f"{s:,.1f}", reduction(b, s)]
        if paper:
            p_cons, p_slack = PAPER_TABLE_1.get(month["label"], (0.0, 0.0))
            cells += [f"{p_cons:,.1f}", f"{p_slack:,.1f}", reduction(p_cons, p_slack)]
        out.append("| " + " | ".join(cells) + " |")
    cells = ["**year**"] + ([f"{sum(m['jobs'] for m in months):,}"] if paper else [])
    for machine in MACHINES:
        base, slack = runs[machine]
        assert base is not None
        assert slack is not None
        b, s = yearly(base), yearly(slack)
        cells += [f"**{b:,.1f}**", f"**{s:,.1f}**", f"**{reduction(b, s)}**"]
    if paper:
        p_cons, p_slack = PAPER_TABLE_1_AVERAGE
        cells += [f"**{p_cons:,.2f}**", f"**{p_slack:,.2f}**", f"**{reduction(p_cons, p_slack)}**"]
    out.append("| " + " | ".join(cells) + " |")
    if not paper:
        out += [
            "",
            "Slack has the shorter average wait in "
            + " and ".join(
                f"{better[m]} of {len(months)} months on {m} processors" for m in MACHINES
            )
            + ".",
        ]
    return out


def _table_2(cache: dict[str, Any]) -> list[str]:
    out = [
        "| SF | " + " | ".join(str(sf) for sf in SLACK_FACTORS) + " |",
        "|---|" + "---:|" * len(SLACK_FACTORS),
    ]
    for machine in MACHINES:
        cons = cons_run(cache, machine)
        cells = []
        for sf in SLACK_FACTORS:
            run = slack_run(cache, machine, sf=sf)
            cells.append("" if run is None else f"{yearly(run):,.0f}")
        label = f"ours, {machine} procs"
        if cons is not None:
            label += f" (cons {yearly(cons):,.0f})"
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append(
        "| paper (cons 2,401) | "
        + " | ".join(str(PAPER_TABLE_2[sf]) for sf in SLACK_FACTORS)
        + " |"
    )
    return out


def _table_3(cache: dict[str, Any], machine: int) -> list[str]:
    equal = slack_run(cache, machine)
    unequal = slack_run(cache, machine, priorities="every-nth:5")
    if equal is None or unequal is None:
        return ["(not run yet)"]
    out = [
        "| month | equal (ours) | equal (paper) | all (ours) | all (paper) | hi (ours) | hi (paper) | lo (ours) | lo (paper) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for index, month in enumerate(unequal):
        label = month["label"]
        classes = month.get("priority_classes", {})
        hi = classes.get(HIGH, {}).get("avg_wait", 0.0)
        lo = classes.get(LOW, {}).get("avg_wait", 0.0)
        p_all, p_hi, p_lo = PAPER_TABLE_3.get(label, (0.0, 0.0, 0.0))
        p_equal = PAPER_TABLE_1.get(label, (0.0, 0.0))[1]
        out.append(
            f"| {label} | {equal[index]['avg_wait']:,.1f} | {p_equal:,.1f} | {month['avg_wait']:,.1f} "
            f"| {p_all:,.1f} | {hi:,.1f} | {p_hi:,.1f} | {lo:,.1f} | {p_lo:,.1f} |"
        )
    p_all, p_hi, p_lo = PAPER_TABLE_3_AVERAGE
    out.append(
        f"| **year** | **{yearly(equal):,.1f}** | **{PAPER_TABLE_1_AVERAGE[1]:,.2f}** "
        f"| **{yearly(unequal):,.1f}** | **{p_all:,.2f}** | **{class_wait(unequal, HIGH):,.1f}** "
        f"| **{p_hi:,.2f}** | **{class_wait(unequal, LOW):,.1f}** | **{p_lo:,.1f}** |"
    )
    return out


def _table_5(cache: dict[str, Any]) -> list[str]:
    out = [
        "| heuristic | procs | equal | unequal | loss | hi-pri | lo-pri | gap | vs cons (equal) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for heuristic in HEURISTICS:
        for machine in MACHINES:
            equal = slack_run(cache, machine, heuristic)
            unequal = slack_run(cache, machine, heuristic, priorities="every-nth:5")
            best = slack_run(cache, machine)
            cons = cons_run(cache, machine)
            if equal is None or unequal is None or best is None or cons is None:
                continue
            e, u = yearly(equal), yearly(unequal)
            hi, lo = class_wait(unequal, HIGH), class_wait(unequal, LOW)
            out.append(
                f"| {heuristic.upper()} | {machine} | {e:,.1f} | {u:,.1f} "
                f"| {100 * (u - yearly(best)) / yearly(best):.1f}% "
                f"| {hi:,.1f} | {lo:,.1f} | {lo - hi:,.1f} | {reduction(yearly(cons), e)} |"
            )
        p_e, p_u, p_hi, p_lo = PAPER_TABLE_5[heuristic]
        out.append(
            f"| {heuristic.upper()} | paper | {p_e:,.1f} | {p_u:,.1f} | {100 * (p_u - 2004.5) / 2004.5:.1f}% "
            f"| {p_hi:,.1f} | {p_lo:,.1f} | {p_lo - p_hi:,.1f} | {reduction(2401.44, p_e)} |"
        )
    return out


def _plot(cache: dict[str, Any]) -> None:
    figure, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    labels = list(PAPER_TABLE_1)
    xs = range(len(labels))
    axis = axes[0]
    axis.plot(xs, [PAPER_TABLE_1[m][0] for m in labels], "k--", label="paper conservative")
    axis.plot(xs, [PAPER_TABLE_1[m][1] for m in labels], "k-", label="paper slack")
    for machine, colour in zip(MACHINES, ("tab:blue", "tab:orange"), strict=True):
        cons, slack = cons_run(cache, machine), slack_run(cache, machine)
        if cons is not None and slack is not None:
            axis.plot(
                xs,
                [m["avg_wait"] for m in cons],
                "--",
                color=colour,
                label=f"conservative {machine}",
            )
            axis.plot(
                xs, [m["avg_wait"] for m in slack], "-", color=colour, label=f"slack {machine}"
            )
    axis.set_xticks(list(xs), [m[2:] for m in labels], rotation=45)
    axis.set_ylabel("average wait (s)")
    axis.set_title("Table 1: KTH month by month")
    axis.legend(fontsize=8)
    axis = axes[1]
    axis.plot(
        SLACK_FACTORS, [PAPER_TABLE_2[sf] for sf in SLACK_FACTORS], "k-o", label="paper (128?)"
    )
    for machine in MACHINES:
        values = [slack_run(cache, machine, sf=sf) for sf in SLACK_FACTORS]
        if all(v is not None for v in values):
            axis.plot(
                SLACK_FACTORS,
                [yearly(v) for v in values if v is not None],
                "-o",
                label=f"ours {machine}",
            )
    axis.set_xlabel("slack factor SF")
    axis.set_ylabel("yearly average wait (s)")
    axis.set_title("Table 2: slack factor")
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(PLOTS / "talby-feitelson.png", dpi=90)
    plt.close(figure)


def render(cache: dict[str, Any]) -> str:
    _plot(cache)
    out = [
        "### Table 1: average wait (s), conservative vs slack (AST, SF 3)",
        "",
        *_table_1(cache),
        "",
        "### Table 1 against EASY: average wait (s), EASY vs slack (AST, SF 3)",
        "",
        *_table_1(cache, baseline="easy"),
        "",
    ]
    for machine in MACHINES:
        cons, easy, literal = (
            cons_run(cache, machine),
            cons_run(cache, machine, "easy"),
            slack_run(cache, machine, awt=str(PAPER_AWT)),
        )
        if cons is not None and easy is not None:
            line = (
                f"On {machine} processors: EASY {yearly(easy):,.1f} s, conservative {yearly(cons):,.1f} s "
                f"(used as AWT)"
            )
            if literal is not None:
                line += f"; slack with the paper's AWT of 2,401 s: {yearly(literal):,.1f} s"
            out += [line + ".", ""]
    out += [
        "![Tables 1 and 2](talby-feitelson.png)",
        "",
        "### Table 2: yearly average wait (s) by slack factor (AST)",
        "",
        *_table_2(cache),
        "",
    ]
    for machine in MACHINES:
        out += [
            f"### Table 3: every fifth job high priority, {machine} processors (AST, SF 3)",
            "",
            *_table_3(cache, machine),
            "",
        ]
    plot_sweeps(cache)
    out += [
        f"### Table 4: yearly average wait (s) against the priority gap (AST, SF 3, "
        f"{SWEEP_MACHINE} processors)",
        "",
        "Every fifth job gets user and political priority gap/2 each, the others 0 (gap 0: "
        "equal priorities, gap 2: Table 3).",
        "",
        *table_4(cache),
        "",
        "### The alpha weights (section 3.3's text): yearly average wait (s)",
        "",
        *table_alphas(cache),
        "",
        "### The AWT parameter (section 3.2's text): yearly averages (s)",
        "",
        *table_awt(cache),
        "",
        "![Table 4 and the AWT sweep](talby-feitelson-sweeps.png)",
        "",
        "### Table 5: the permutation heuristics (yearly average wait, s)",
        "",
        "*loss*: unequal against the best equal-priority result (AST); *gap*: lo-pri minus hi-pri.",
        "",
        *_table_5(cache),
        "",
    ]
    seconds = [r["seconds"] for r in cache.values()]
    out.append(
        f"Generated by `.venv/bin/python experiments/talby_feitelson.py` from {len(cache)} cached runs "
        f"(12 monthly replays each; median {sorted(seconds)[len(seconds) // 2]:.1f} s, max {max(seconds):.1f} s per run)."
    )
    return "\n".join(out)


def main() -> None:
    args = parse_arguments(__doc__)
    start_cache(CACHE, args)
    cache = load_cache(CACHE)
    if not args.render:
        configs = configurations()
        references = tasks([c for c in configs if c[1] != "slack"], cache)
        cache = run_missing(CACHE, references, task_key, run_one, args.workers, args.dask)
        cache = run_missing(
            CACHE, tasks(configs, cache), task_key, run_one, args.workers, args.dask
        )
    write_generated(PAGE, render(cache), "Talby & Feitelson (1999) reproduction")


if __name__ == "__main__":
    main()
