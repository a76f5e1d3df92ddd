"""The CLI's path door checks; they live in :mod:`vistalab._core._paths` so that
every layer (sims' engine store folders too) uses the same rules."""

from vistalab._core._paths import (
    input_dir,
    input_file,
    input_path,
    output_dir,
    output_file,
)

__all__ = ["input_file", "input_path", "input_dir", "output_dir", "output_file"]
