"""PNG charts of one run: ``python -m benchmarks --plot DIR`` (or ``--from-json FILE``).

matplotlib is imported here only, and only when a chart is drawn: it comes with the
``bench`` extra, and nothing else in the benchmarks needs it. Charts (each only when the
run has that workload):

- ``w1_throughput.png``: W1 framing, MB/s per chunk size, every framer and the floor
  (bars, log scale);
- ``w3_growth.png``: W3, time and peak memory against the size of the arguments (log-log),
  one panel per mode and dialect, the fitted growth exponent in the legend;
- ``w4_per_feed.png``: W4, ns per ``feed`` per dialect, framing and bytes to calls (bars,
  log scale);
- ``w5_many_streams.png``: W5, client CPU per stream per dialect, and where that CPU goes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["NoMatplotlib", "write_all"]


class NoMatplotlib(Exception):
    """``--plot`` without matplotlib installed."""


_OURS = ("#1f4e9c", "#5b8fd9", "#9ec1f0", "#0b2a5b")
_PEERS = ("#d1495b", "#edae49", "#66a182", "#8d6a9f", "#e07a5f", "#8c564b", "#17becf", "#b5838d")
_FLOOR = "#7f7f7f"


def _pyplot() -> Any:
    # The bench extra's; CI's type check runs before it is installed (as atheris's import).
    try:
        import matplotlib  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise NoMatplotlib(
            "matplotlib is not installed: pip install -e '.[bench]' (or pip install matplotlib)"
        ) from exc
    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt  # type: ignore[import-not-found,unused-ignore]

    return plt


def _colors(rows: Sequence[dict[str, Any]]) -> dict[str, str]:
    """One colour per implementation name, the same in every chart of a run."""
    out: dict[str, str] = {}
    ours = peers = 0
    for r in rows:
        name = r["impl"]
        if name in out:
            continue
        if r["role"] == "ours":
            out[name] = _OURS[ours % len(_OURS)]
            ours += 1
        elif r["role"] == "floor":
            out[name] = _FLOOR
        else:
            out[name] = _PEERS[peers % len(_PEERS)]
            peers += 1
    return out


def _names(rows: Sequence[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for r in rows:
        seen.setdefault(r["impl"], None)
    return list(seen)


def _bars(
    ax: Any,
    rows: Sequence[dict[str, Any]],
    group_key: str,
    value_key: str,
    colors: dict[str, str],
    group_label: Any = str,
) -> None:
    """Grouped bars: one group per ``group_key`` value, one bar per implementation there.

    Each group packs the implementations it has (a dialect without an SDK leaves no gap).
    """
    groups = list(dict.fromkeys(r[group_key] for r in rows))
    names = _names(rows)
    widest = max(sum(1 for r in rows if r[group_key] == g) for g in groups)
    width = 0.8 / max(1, widest)
    labelled: set[str] = set()
    for i, g in enumerate(groups):
        present = [n for n in names for r in rows if r[group_key] == g and r["impl"] == n]
        values = {r["impl"]: r[value_key] for r in rows if r[group_key] == g}
        start = i - width * len(present) / 2
        for j, name in enumerate(present):
            ax.bar(
                start + width * (j + 0.5),
                values[name],
                width,
                color=colors[name],
                label=None if name in labelled else name,
            )
            labelled.add(name)
    ax.set_xticks(range(len(groups)), [group_label(g) for g in groups])
    ax.set_yscale("log")
    ax.grid(axis="y", which="both", alpha=0.3)


def _w1(plt: Any, rows: list[dict[str, Any]], colors: dict[str, str], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(10, 5.5))
    _bars(ax, rows, "chunk", "mb_s", colors, lambda c: f"{c} B chunks")
    ax.set_ylabel("MB/s of body (log scale; higher is better)")
    ax.set_title("W1: SSE framing throughput, Chat Completions events")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _w3(plt: Any, rows: list[dict[str, Any]], colors: dict[str, str], path: Path) -> None:
    plans = list(dict.fromkeys((r["mode"], r["dialect"], r["kind"]) for r in rows))
    fig, axes = plt.subplots(len(plans), 2, figsize=(15, 3.6 * len(plans)), squeeze=False)
    for (mode, dialect, kind), (ax_t, ax_m) in zip(plans, axes, strict=True):
        group = [r for r in rows if (r["mode"], r["dialect"], r["kind"]) == (mode, dialect, kind)]
        for r in group:
            if not r["sizes"]:
                continue
            k = r.get("exponent")
            label = f"{r['impl']} (k={k:.2f})" if k is not None else r["impl"]
            style = {"color": colors[r["impl"]], "marker": "o", "markersize": 4}
            if r["role"] == "ours":
                style["linewidth"] = 2.5
            ax_t.plot(r["sizes"], r["seconds"], label=label, **style)
            mem = [(s, p) for s, p in zip(r["sizes"], r["peak_bytes"], strict=True) if p]
            if mem:
                ax_m.plot(
                    [s for s, _ in mem], [p / 2**20 for _, p in mem], label=r["impl"], **style
                )
        what = "framers" if kind == "framer" else "bytes to calls"
        ax_t.set_title(f"W3 {mode}, {dialect}, {what}: time per stream", fontsize=10)
        ax_m.set_title(f"W3 {mode}, {dialect}, {what}: tracemalloc peak", fontsize=10)
        for ax, unit in ((ax_t, "seconds"), (ax_m, "MiB")):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("argument bytes")
            ax.set_ylabel(unit)
            ax.grid(which="both", alpha=0.3)
        if not ax_m.lines:
            ax_m.text(0.5, 0.5, "not measured in this run", transform=ax_m.transAxes, ha="center")
        # One legend per row, right of both panels: it hides no line.
        handles, labels = ax_t.get_legend_handles_labels()
        ax_m.legend(
            handles,
            labels,
            fontsize=7,
            title="k: growth exponent of time",
            title_fontsize=7,
            loc="center left",
            bbox_to_anchor=(1.02, 0.5),
        )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _w4(plt: Any, rows: list[dict[str, Any]], colors: dict[str, str], path: Path) -> None:
    kinds = [k for k in ("framer", "calls") if any(r["kind"] == k for r in rows)]
    fig, axes = plt.subplots(1, len(kinds), figsize=(7 * len(kinds), 5.5), squeeze=False)
    for kind, ax in zip(kinds, axes[0], strict=True):
        group = [r for r in rows if r["kind"] == kind]
        _bars(ax, group, "dialect", "ns_feed", colors)
        ax.set_ylabel("ns per feed (log scale; lower is better)")
        what = "framing" if kind == "framer" else "bytes to complete calls"
        ax.set_title(f"W4, one event per read: {what}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _w5(plt: Any, rows: list[dict[str, Any]], colors: dict[str, str], path: Path) -> None:
    fig, (ax_c, ax_s) = plt.subplots(1, 2, figsize=(15, 6), gridspec_kw={"width_ratios": [1.2, 1]})
    _bars(ax_c, rows, "dialect", "cpu_ms_stream", colors)
    ax_c.set_ylabel("client CPU ms per stream (log scale; lower is better)")
    ax_c.set_title(f"W5: {rows[0]['streams']} concurrent streams over loopback HTTP")
    ax_c.legend(fontsize=7)
    shared = [r for r in rows if r.get("shares")]
    layers = (("parsing", "#1f4e9c"), ("http", "#edae49"), ("loop", "#66a182"), ("other", "#bbb"))
    labels = [f"{r['dialect']}: {r['impl']}" for r in shared]
    left = [0.0] * len(shared)
    for layer, color in layers:
        widths = [r["shares"][layer] * 100 for r in shared]
        ax_s.barh(range(len(shared)), widths, left=left, color=color, label=layer)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax_s.set_yticks(range(len(shared)), labels, fontsize=7)
    ax_s.invert_yaxis()
    ax_s.set_xlabel("% of the client's profiled time")
    ax_s.set_title("Where it goes (cProfile; parsing: ours, or the peer's reader)")
    ax_s.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.09), ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_all(report: dict[str, Any], directory: Path) -> list[Path]:
    """Draw every chart the report has data for into ``directory``; returns the files.

    Raises:
        NoMatplotlib: matplotlib is not installed.
    """
    plt = _pyplot()
    directory.mkdir(parents=True, exist_ok=True)
    every = [r for key in ("w1", "w2", "w3", "w4", "w5") for r in report.get(key) or []]
    colors = _colors(every)
    written: list[Path] = []
    for key, name, draw in (
        ("w1", "w1_throughput.png", _w1),
        ("w3", "w3_growth.png", _w3),
        ("w4", "w4_per_feed.png", _w4),
        ("w5", "w5_many_streams.png", _w5),
    ):
        rows = report.get(key) or []
        if rows:
            path = directory / name
            draw(plt, rows, colors, path)
            written.append(path)
    return written
