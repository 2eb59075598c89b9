"""Known-wrong and known-right kernels per exercise module, mirroring puzzles/ (format: common.py)."""
