"""paper_checks: see README and DESIGN.md (filled in by its issue)."""

__all__: list[str] = []
