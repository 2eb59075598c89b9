"""A deadlock said plainly: what each rank waits for, the cycle of waits, and the fix that fits."""

from __future__ import annotations


def _what(world, r: int) -> tuple[str, list[int]]:
    """(what rank r waits for, the ranks it waits on)."""
    _, what, where, peers = world.waiting[r]
    if isinstance(what, tuple):  # a collective: (kind, number)
        kind, n = what
        late = [q for q in range(world.size) if world.calls[n][q] is None]
        who = f"ranks {', '.join(map(str, late))} call" if len(late) > 1 else f"rank {late[0]} calls"
        return f"rank {r} waits in {kind} (its collective #{n}) at {where} until {who} it too", late
    op = what
    if op.kind == "send":
        text = f"rank {r} waits at {where} until rank {op.peer} receives its message"
        text += f" ({op.buf.size} {op.buf.dtype})"
    else:
        text = f"rank {r} waits at {where} for a {op.describe()}"
    if op.peer in world.finished:
        text += f", but rank {op.peer} has already returned"
    return text, list(peers)


def describe(world) -> str:
    lines, edges, sends_first = [], {}, True
    for r in range(world.size):
        if r in world.finished:
            lines.append(f"rank {r} has returned")
            continue
        text, on = _what(world, r)
        lines.append(text)
        edges[r] = on
        what = world.waiting[r][1]
        if isinstance(what, tuple) or what.kind != "send":
            sends_first = False
    cycle = _cycle(edges)
    head = "Deadlock: every rank still running waits for another.\n  " + "\n  ".join(lines)
    if cycle:
        head += "\nThe waits form a cycle: " + " -> ".join(map(str, cycle)) + "."
    if any(isinstance(world.waiting[r][1], tuple) for r in edges):
        fix = (
            "Every rank must call the same collectives in the same order; a collective called on "
            "some ranks only (inside an `if rank == ...`) waits forever."
        )
    elif sends_first:
        fix = (
            "Every rank sends before it receives, and a send returns only once its receiver has "
            "the message (MPI buffers only small messages; NCCL never does). Post the receive "
            "first: comm.sendrecv(sendbuf, dest, recvbuf, source), or req = comm.irecv(...), "
            "comm.isend(...) and wait both; or let even ranks send first and odd ranks receive first."
        )
    else:
        fix = (
            "Each send needs a receive on the rank it names, posted in the same order: check the "
            "neighbours ((rank + 1) % size to the right, (rank - 1) % size to the left) and that "
            "every rank makes the same number of exchanges."
        )
    return f"{head}\nFix: {fix}"


def _cycle(edges: dict) -> list[int]:
    for start in edges:
        seen, r = [], start
        while r in edges and r not in seen:
            seen.append(r)
            nxt = edges[r]
            if not nxt:
                break
            r = nxt[0]
        if r in seen:
            return seen[seen.index(r) :] + [r]
    return []
