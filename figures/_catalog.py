"""The figure scripts, imported statically: :data:`FIGURES` maps each name of
:data:`figures.FIGURE_NAMES` to its module."""

from __future__ import annotations

from types import ModuleType

from . import (
    fig1_recovery,
    fig2_separation,
    fig3_content_channel,
    fig4_tradeoff,
    fig5_phase_transition,
    fig6_paper_tables,
    fig7_dashboard_overhead,
    fig8_beyond,
)

__all__ = ["FIGURES"]

FIGURES: dict[str, ModuleType] = {
    m.NAME: m
    for m in (fig1_recovery, fig2_separation, fig3_content_channel, fig4_tradeoff,
              fig5_phase_transition, fig6_paper_tables, fig7_dashboard_overhead, fig8_beyond)
}

