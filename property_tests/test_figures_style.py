"""Figure output conventions ("PNG at 200 dpi and vector PDF ... a
colour-blind-safe palette"; DESIGN.md rule 11: "a non-interactive backend and a
style file, no import-time rcParams edits")."""

import subprocess
import sys

import matplotlib
import matplotlib.image
import pytest
from vistalab.figures import (
    FIGURE_NAMES,
    PALETTE,
    STYLE_PATH,
    figure_style,
    new_figure,
    save_figure,
)


def test_style_is_scoped_to_the_context():
    """The style changes rcParams only inside the block (no global side effects)."""
    before = matplotlib.rcParams["savefig.dpi"], matplotlib.rcParams["axes.spines.top"]
    with figure_style():
        assert matplotlib.rcParams["savefig.dpi"] == 200
        assert matplotlib.rcParams["axes.spines.top"] is False
    assert (matplotlib.rcParams["savefig.dpi"], matplotlib.rcParams["axes.spines.top"]) == before


def test_importing_every_figure_script_leaves_rcparams_alone():
    """Import-time rcParams edits are forbidden (DESIGN.md rule 11)."""
    # dict.items bypasses rcParams' __getitem__, which would resolve (and import) a backend.
    code = (
        "import matplotlib, sys\n"
        "before = dict(dict.items(matplotlib.rcParams))\n"
        "from vistalab.figures._catalog import FIGURES\n"  # imports every figure statically
        f"assert tuple(FIGURES) == {tuple(FIGURE_NAMES)!r}\n"
        "assert 'matplotlib.pyplot' not in sys.modules\n"
        "after = dict(dict.items(matplotlib.rcParams))\n"
        "changed = [k for k in before if before[k] != after[k]]\n"
        "assert not changed, changed\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_style_cycle_uses_the_okabe_ito_palette():
    """Every colour the style cycles through is one of the Okabe-Ito colours."""
    with figure_style():
        cycle = [c["color"].upper().lstrip("#") for c in matplotlib.rcParams["axes.prop_cycle"]]
    okabe_ito = {v.upper().lstrip("#") for k, v in PALETTE.items() if k != "grey"}
    assert set(cycle) <= okabe_ito
    assert len(cycle) == 8
    assert STYLE_PATH.name == "vista.mplstyle" and STYLE_PATH.is_file()


def test_save_writes_200_dpi_png_and_deterministic_pdf(tmp_path):
    """A 2 x 1 inch figure is 400 x 200 pixels at 200 dpi; the PDF is vector and has
    no creation date, so identical inputs give identical bytes."""
    def make():
        with figure_style():
            fig, axes = new_figure(1, 1, width=2.0, height=1.0)
            axes[0, 0].plot([0, 1], [0, 1], label="line")
            return save_figure(fig, tmp_path / "out", "demo")

    png, pdf = make()
    assert png.name == "demo.png" and pdf.name == "demo.pdf"
    assert matplotlib.image.imread(png).shape[:2] == (200, 400)
    first = pdf.read_bytes()
    assert first.startswith(b"%PDF")
    make()
    assert pdf.read_bytes() == first
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["demo.pdf", "demo.png"]


def test_unknown_figure_name_suggests_the_closest():
    from vistalab.figures import load_figure
    from vistalab.theory import UnknownNameError

    with pytest.raises(UnknownNameError, match=r"Did you mean 'fig2_separation'"):
        load_figure("fig2_seperation")
