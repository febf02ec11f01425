"""Internal helpers: input validation, progress bars, atomic files."""
