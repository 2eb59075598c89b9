"""The lockstep engine: all threads of a block as NumPy lanes, the kernel's AST rewritten to run
each statement over the active lanes. A fast prover of clean runs; helpers/sim/dispatch.py decides
when "auto" falls back to the greenlet engine (the reference).

Modules: transform.py (the AST rewrite and the static check), control.py (masks), values.py (lane
values with Python's typing), memory.py (checked gathers and scatters), races.py, api.py (`cuda`,
math and casts), run.py (the launch).
"""
