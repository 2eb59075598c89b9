"""The course's tools: above everything, shipped in no wheel, imported by nothing in helpers/ or puzzles/.

python -m tools.nbbuild     build the notebooks (and puzzles/mutant_kinds.json) from their sources
python -m tools.release     where the course lives: show, re-point, check
python -m tools.bench       time every chapter's benchmark on the GPU, judge the goals
python -m tools.profile     the launches behind the notebooks' profiler findings (for ncu)
python -m tools.ncu_summary ncu on tools.profile's launches: what limits each kernel, one line each
python -m tools.sim_speed   the simulator's speed against Numba's own
python -m tools.train       train the course's GPT-2 on Shakespeare (CPU, simulator or GPU; vs PyTorch)
"""
