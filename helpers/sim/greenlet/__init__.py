"""The greenlet engine (the reference): one greenlet per CUDA thread, interleaved at barriers and
warp operations, every access checked and recorded.

Modules: scheduler.py (the launch), threads.py (threads and what they wait for), api.py (`cuda`),
memory.py (checked arrays), spaces.py (shared, local and constant memory), barriers.py, warps.py,
spin.py (spin-waits), assemble.py (records into a Trace).
"""
