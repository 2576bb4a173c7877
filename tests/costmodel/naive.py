"""Plain-Python references for the cost-model kernels (our port of the seed's semantics,
with the bugs listed in ../shared/paddle-cases/README.md fixed). Dicts and sets, no numba,
written for clarity; quadratic or worse, for small inputs only."""

from __future__ import annotations


def merge(n, cost, phase, edges, serial_first):
    """Merge to the fixed point. Returns {frozenset(members): (cost, phase)}.

    Rules as in fastsched.costmodel._merge: 1 series, 2 parallel (all successors of a
    node, each with that node as only predecessor and one common successor, one phase),
    3 serialising (X's only predecessor is P, same phase; smallest key first). Optimizer
    nodes (phase 2) never merge. ``serial_first`` gives rule 3 priority.
    """
    members = {v: frozenset([v]) for v in range(n)}
    c = {v: float(cost[v]) for v in range(n)}
    ph = {v: int(phase[v]) for v in range(n)}
    succ = {v: set() for v in range(n)}
    pred = {v: set() for v in range(n)}
    for a, b in edges:
        succ[a].add(b)
        pred[b].add(a)

    def key(v):
        return min(members[v])

    def combine(new_id, olds, new_cost):
        # replace nodes ``olds`` by ``new_id`` everywhere (sets dedupe multi-edges)
        ps = set().union(*(pred[o] for o in olds)) - set(olds)
        ss = set().union(*(succ[o] for o in olds)) - set(olds)
        mem = frozenset().union(*(members[o] for o in olds))
        p0 = ph[olds[0]]
        for o in olds:
            for q in pred[o]:
                succ[q].discard(o)
            for s in succ[o]:
                pred[s].discard(o)
            del pred[o], succ[o], members[o], c[o], ph[o]
        pred[new_id], succ[new_id], members[new_id] = ps, ss, mem
        c[new_id], ph[new_id] = new_cost, p0
        for q in ps:
            succ[q].add(new_id)
        for s in ss:
            pred[s].add(new_id)

    next_id = [n]

    def fresh():
        next_id[0] += 1
        return next_id[0] - 1

    def try_series_or_parallel():
        for v in sorted(c, key=key):
            if ph[v] != 2 and len(succ[v]) == 1:
                (x,) = succ[v]
                if len(pred[x]) == 1 and ph[x] == ph[v]:
                    combine(fresh(), [v, x], c[v] + c[x])
                    return True
            if len(succ[v]) >= 2:
                ss = list(succ[v])
                ends = set()
                ok = True
                for s in ss:
                    if pred[s] != {v} or len(succ[s]) != 1 or ph[s] == 2 or ph[s] != ph[ss[0]]:
                        ok = False
                        break
                    ends |= succ[s]
                if ok and len(ends) == 1:
                    combine(fresh(), ss, max(c[s] for s in ss))
                    return True
        return False

    def try_serial():
        cands = [x for x in c if ph[x] != 2 and len(pred[x]) == 1 and ph[next(iter(pred[x]))] == ph[x]]
        if not cands:
            return False
        x = min(cands, key=key)
        (p,) = pred[x]
        combine(fresh(), [p, x], c[p] + c[x])
        return True

    while True:
        if serial_first:
            if try_serial() or try_series_or_parallel():
                continue
        elif try_series_or_parallel() or try_serial():
            continue
        break
    return {members[v]: (c[v], ph[v]) for v in c}


def op_graph(ops_reads, ops_writes, persistable):
    """Versioned op graph: a reader depends on the last earlier writer of each variable.

    ``ops_reads[i]``/``ops_writes[i]``: variable ids. Returns (edges set, first_use,
    last_use) with -1 = live from the start and -2 = never used.
    """
    last_writer = {}
    edges = set()
    first, last = {}, {}
    for i, (rd, wr) in enumerate(zip(ops_reads, ops_writes, strict=False)):
        for v in rd:
            w = last_writer.get(v)
            if w is not None and w != i:
                edges.add((w, i))
            first.setdefault(v, -1 if w is None else i)
            last[v] = i
        for v in wr:
            last_writer[v] = i
            first.setdefault(v, i)
            last[v] = i
    n = len(persistable)
    return (
        edges,
        [first.get(v, -2) for v in range(n)],
        [last.get(v, -2) for v in range(n)],
    )


def memory(first, last, size, persistable, n_ops):
    """Static memory and the peak of live memory, op by op (sets)."""
    static = sum(s for s, p in zip(size, persistable, strict=False) if p)
    peak = 0.0
    for t in range(-1, n_ops):
        live = sum(
            size[v] for v in range(len(size)) if not persistable[v] and first[v] != -2 and first[v] <= t <= last[v]
        )
        peak = max(peak, live)
    return static, static + peak


def pipeline(fwd, bwd, optim, m):
    """The seed's FIFO pipeline simulation with an unbounded queue and stage times."""
    from collections import deque

    S = len(fwd)
    q = deque(("fwd", 0, -1.0) for _ in range(m))
    gtime = [0.0] * S
    slots = [S - s for s in range(S)]
    left = [m] * S
    while q:
        name, s, t0 = q.popleft()
        if name == "fwd":
            if slots[s] <= 0:
                q.append((name, s, t0))
                continue
            end = max(gtime[s], t0) + fwd[s]
            q.append(("fwd", s + 1, end) if s != S - 1 else ("bwd", s, end))
            slots[s] -= 1
        elif name == "bwd":
            end = max(gtime[s], t0) + bwd[s]
            if s != 0:
                q.append(("bwd", s - 1, end))
            slots[s] += 1
            left[s] -= 1
            if left[s] == 0:
                q.append(("optim", s, end))
        else:
            end = max(gtime[s], t0) + optim[s]
        gtime[s] = end
    return max(gtime) if gtime else 0.0


def pipeline_events(fwd, bwd, optim, m):
    """The seed's FIFO simulation again, returning every executed event in order:
    ``[(stage, kind, microbatch, start, end)]`` (kind 0 fwd, 1 bwd, 2 optim)."""
    from collections import deque

    S = len(fwd)
    q = deque((0, 0, i, -1.0) for i in range(m))
    gtime = [0.0] * S
    slots = [S - s for s in range(S)]
    left = [m] * S
    out = []
    while q:
        kind, s, mb, t0 = q.popleft()
        if kind == 0 and slots[s] <= 0:
            q.append((kind, s, mb, t0))
            continue
        start = max(gtime[s], t0)
        if kind == 0:
            end = start + fwd[s]
            q.append((0, s + 1, mb, end) if s != S - 1 else (1, s, mb, end))
            slots[s] -= 1
        elif kind == 1:
            end = start + bwd[s]
            if s != 0:
                q.append((1, s - 1, mb, end))
            slots[s] += 1
            left[s] -= 1
            if left[s] == 0:
                q.append((2, s, -1, end))
        else:
            end = start + optim[s]
        gtime[s] = end
        out.append((s, kind, mb, start, end))
    return out


def schedule_orders(name, S, m, v=1):
    """Per-stage operation lists ``[(op, chunk, microbatch)]`` (op "F", "B" or "W"), built
    from each schedule's description: GPipe all F then all B; 1F1B warm-up ``S-s-1`` F, then
    F/B pairs, then the remaining B; ZB-H1 as 1F1B with each W deferred by ``s``
    microbatches (a queue of pending W); interleaved as Megatron-LM (groups of S
    microbatches per chunk, warm-up ``2(S-s-1) + (v-1)S``)."""
    orders = []
    for s in range(S):
        o = []
        if name == "gpipe":
            o = [("F", 0, i) for i in range(m)] + [("B", 0, i) for i in range(m)]
        elif name in ("1f1b", "zb-h1"):
            w = min(S - s - 1, m)
            d = s if name == "zb-h1" else None
            pending = []

            def backward(i, o=o, pending=pending, d=d):
                o.append(("B", 0, i))
                if d is not None:
                    pending.append(i)
                    if len(pending) > d:
                        o.append(("W", 0, pending.pop(0)))

            o += [("F", 0, i) for i in range(w)]
            for i in range(m - w):
                o.append(("F", 0, w + i))
                backward(i)
            for j in range(m - w, m):
                backward(j)
            o += [("W", 0, i) for i in pending]
        elif name == "interleaved":
            fseq = [(c, g * S + t) for g in range(m // S) for c in range(v) for t in range(S)]
            bseq = [(v - 1 - c, i) for c, i in fseq]
            w = min(2 * (S - s - 1) + (v - 1) * S, m * v)
            o = [("F",) + x for x in fseq[:w]]
            for j in range(m * v - w):
                o.append(("F",) + fseq[w + j])
                o.append(("B",) + bseq[j])
            o += [("B",) + x for x in bseq[m * v - w :]]
        orders.append(o)
    return orders


def run_orders(orders, fwd, bwd, wgt, optim, v=1, p2p=0.0):
    """Longest-path times of fixed per-stage orders: each op starts when its stage is free
    and its dependency is done (+ ``p2p`` between stages). Returns ``(total, peak)`` with
    the peak number of microbatch chunks holding activations per stage (freed at B, or at
    W where there is one)."""
    S = len(orders)
    V = S * v
    has_w = any(op == "W" for o in orders for op, _, _ in o)
    end = {}
    free = [0.0] * S
    pos = [0] * S
    live = [0] * S
    peak = [0] * S
    left = sum(len(o) for o in orders)
    while left:
        moved = False
        for s in range(S):
            while pos[s] < len(orders[s]):
                op, c, i = orders[s][pos[s]]
                j = c * S + s
                if op == "F":
                    dep = ("F", j - 1, i) if j > 0 else None
                    dur = fwd[s] / v
                elif op == "B":
                    dep = ("B", j + 1, i) if j < V - 1 else ("F", j, i)
                    dur = bwd[s] / v
                else:
                    dep = ("B", j, i)
                    dur = wgt[s]
                if dep is not None and dep not in end:
                    break
                ready = 0.0 if dep is None else end[dep]
                if dep is not None and dep[0] == op and S > 1:
                    ready += p2p  # from the neighbouring stage
                t = max(free[s], ready) + dur
                end[(op, j, i)] = t
                free[s] = t
                if op == "F":
                    live[s] += 1
                    peak[s] = max(peak[s], live[s])
                elif (op == "B" and not has_w) or op == "W":
                    live[s] -= 1
                pos[s] += 1
                left -= 1
                moved = True
        assert moved, "deadlock"
    return max(f + o for f, o in zip(free, optim, strict=True)), peak


def _cluster_values(cluster, stack=None):
    # the cluster as the cost functions take it: FLOP/s, GPUs per node, then bytes/ms and
    # ms for the intra- and inter-node links (from GB/s and microseconds); then the GEMM
    # model's hardware (matmul FLOP/s, SMs, HBM bytes/s; 0 FLOP/s: the flat model) and the
    # stack's shares (attention backward as a share of the ceiling, not of the forward's); the
    # stack's attention share is of the type's attention ceiling (the published rate, or A100's
    # ratio 204.6 / 271.2 of the matmul ceiling), handed to the kernel as a share of the matmul one
    from fastsched.costmodel.roofline import DEFAULT_STACK

    st = DEFAULT_STACK if stack is None else stack
    att = st.attention
    if cluster.matmul_flops is None:
        hw = (0.0, 0.0, 1.0)
    else:
        hw = (cluster.matmul_flops, float(cluster.sms), cluster.hbm_gbps * 1e9)
        ceiling = cluster.attention_flops
        if ceiling is None:
            ceiling = cluster.matmul_flops * (204.6 / 271.2)
        att = st.attention * (ceiling / cluster.matmul_flops)
    return (
        float(cluster.flops),
        float(cluster.gpus_per_node),
        cluster.intra_bandwidth * 1e6,
        cluster.intra_latency_us * 1e-3,
        cluster.inter_bandwidth * 1e6,
        cluster.inter_latency_us * 1e-3,
        *hw,
        st.gemm,
        att,
        att * st.attention_bwd,
        st.memory,
        st.link,
        st.comm_overlap,
    )


def search_brute_force(model, cluster, cost_fn, max_micro_batch=16):
    """Every configuration by nested loops (tensor degree powers of two dividing the heads
    and at most a node, pipeline degree dividing the layers, data degree the rest, every
    microbatch size dividing a replica's batch, schedules with every virtual stage count,
    recomputation, ZeRO stages with data parallelism, sequence parallelism with t > 1);
    ``cost_fn`` is the plain Python cost function. Returns ``(n_configs, best_config,
    best_time, n_fit)`` (first minimum in enumeration order)."""
    mt = model.tuple()
    cl = _cluster_values(cluster)
    N = cluster.gpus
    n = 0
    best = None
    n_fit = 0
    t = 1
    while t <= min(cluster.gpus_per_node, model.heads):
        for p in range(1, model.layers + 1):
            if model.heads % t or N % (t * p) or model.layers % p:
                continue
            d = N // (t * p)
            if model.global_batch % d:
                continue
            per = model.global_batch // d
            Ls = model.layers // p
            for sp in [0, 1] if t > 1 else [0]:
                for b in range(1, min(per, max_micro_batch) + 1):
                    if per % b:
                        continue
                    m = per // b
                    for sched in range(4):
                        if sched == 2:
                            vs = [v for v in range(2, Ls + 1) if Ls % v == 0] if (p > 1 and m % p == 0) else []
                        else:
                            vs = [1]
                        for v in vs:
                            for rec in range(3):
                                for zero in range(4):
                                    if zero and d == 1:
                                        continue
                                    n += 1
                                    r = cost_fn(mt, cl, t, p, d, b, m, sched, v, rec, zero, sp)
                                    if r[-1] <= cluster.memory_bytes:
                                        n_fit += 1
                                        if best is None or r[0] < best[1]:
                                            best = ((t, p, d, b, m, sched, v, rec, zero, sp), r[0])
        t *= 2
    return n, best[0] if best else None, best[1] if best else None, n_fit


def balanced_partition(w, p):
    """Every way of cutting ``w`` into ``p`` contiguous non-empty blocks: the least largest
    block sum, and the greedy partition at that bound (each block as long as the bound and
    the ops left for later blocks allow). Returns ``(best_max, ptr)``."""
    from itertools import combinations

    n = len(w)
    best = None
    for cuts in combinations(range(1, n), p - 1):
        b = [0, *cuts, n]
        mx = max(sum(w[b[k] : b[k + 1]]) for k in range(p))
        if best is None or mx < best:
            best = mx
    ptr = [0]
    i = 0
    for k in range(p - 1):
        acc = w[i]
        j = i + 1
        while j < n - (p - k - 1) and acc + w[j] <= best:
            acc += w[j]
            j += 1
        ptr.append(j)
        i = j
    ptr.append(n)
    return best, ptr


def program_search_brute_force(pm, cluster, cost_fn, schedules=(0, 1, 3), recompute=(0, 2), max_micro_batch=16):
    """Nested loops over the program search space (pipeline degree dividing the GPUs and at
    most the forward ops, data degree the rest, microbatch sizes dividing a replica's batch,
    schedules, recomputation, ZeRO with data parallelism); stages from
    :func:`balanced_partition`; ``cost_fn`` is the plain cost function. Returns
    ``(n_configs, best_config, best_time, n_fit)`` (first minimum in enumeration order)."""
    cl = _cluster_values(cluster)[:6]
    import numpy as np

    fw, act, par = pm.fwd_cost.tolist(), pm.act_bytes.tolist(), pm.param_elems.tolist()
    N = cluster.gpus
    n = n_fit = 0
    best = None
    for p in range(1, N + 1):
        if N % p or p > len(fw):
            continue
        d = N // p
        if pm.global_batch % d:
            continue
        _, ptr = balanced_partition(fw, p)
        sf = np.array([sum(fw[ptr[s] : ptr[s + 1]]) for s in range(p)])
        sa = np.array([sum(act[ptr[s] : ptr[s + 1]]) for s in range(p)])
        sp = np.array([sum(par[ptr[s] : ptr[s + 1]]) for s in range(p)])
        sbd = np.array([act[ptr[s + 1] - 1] if s < p - 1 else 0.0 for s in range(p)])
        per = pm.global_batch // d
        for b in range(1, min(per, max_micro_batch) + 1):
            if per % b:
                continue
            for sched in schedules:
                for rec in recompute:
                    for zero in range(4):
                        if zero and d == 1:
                            continue
                        n += 1
                        r = cost_fn(sf, sa, sp, sbd, pm.scalars(), cl, p, d, b, per // b, sched, rec, zero)
                        if r[-1] <= cluster.memory_bytes:
                            n_fit += 1
                            if best is None or r[0] < best[1]:
                                best = ((1, p, d, b, per // b, sched, 1, rec, zero, 0), r[0])
    return n, best[0] if best else None, best[1] if best else None, n_fit


# --- the GEMM model and a decoder layer's work, written from their stated semantics ----------


def gemm_seconds_reference(m, n, k, batch, dt, flops, sms, bw, tiles=((256, 128), (128, 256))):
    """Seconds of ``batch`` products ``(m x k) @ (k x n)``: every output tile of every product is
    dealt to the SMs in turn (tile ``i`` to SM ``i mod sms``), each SM computes its tiles one
    after the other at ``flops / sms``, the product ends with the busiest SM; the better tile
    orientation is used; the HBM roof moves each operand and the result once."""
    import math

    best = math.inf
    for tm, tn in tiles:
        if sms <= 0:
            best = min(best, 2.0 * m * n * k * batch / flops)
            continue
        per_sm = [0] * int(sms)
        i = 0
        for _ in range(int(batch)):
            for _ in range(math.ceil(m / tm)):
                for _ in range(math.ceil(n / tn)):
                    per_sm[i % int(sms)] += 1
                    i += 1
        tile_s = tm * tn * 2.0 * k / (flops / sms)
        best = min(best, max(per_sm) * tile_s)
    return max(best, dt * batch * (m * k + k * n + m * n) / bw)


def layer_seconds_reference(b, s, h, a, t, sp, fused, dt, F, Fa_f, Fa_b, sms, W):
    """One decoder layer's microbatch on one tensor rank: ``(dense_f, dense_b, attn_f, attn_b,
    elem_f, elem_b)`` from an explicit list of its GEMMs (forward ``x W``, backward ``dy W^T``
    and ``x^T dy``) and of the bytes its elementwise kernels move."""
    g = gemm_seconds_reference
    tok = b * s
    weights = [(h, 3 * h / t), (h / t, h), (h, 4 * h / t), (4 * h / t, h)]  # (in, out) per rank
    dense_f = sum(g(tok, o, i, 1, dt, F, sms, W) for i, o in weights)
    dense_b = sum(g(tok, i, o, 1, dt, F, sms, W) + g(i, o, tok, 1, dt, F, sms, W) for i, o in weights)
    heads, d = b * a / t, h / a
    qkvo = tok * h / t * dt
    if fused:
        causal_flops = 0.5 * 2 * 2 * b * s * s * h / t  # QK^T and PV, half of the blocks
        attn_f = max(causal_flops / Fa_f, 4 * qkvo / W)
        attn_b = max(2.5 * causal_flops / Fa_b, 8 * qkvo / W)
    else:
        n_scores = heads * s * s
        attn_f = g(s, s, d, heads, dt, F, sms, W) + g(s, d, s, heads, dt, F, sms, W)
        attn_f += n_scores * (4 * dt + 1) / W  # softmax in/out, dropout in/out + 1-byte mask
        attn_b = g(s, s, d, heads, dt, F, sms, W) + 3 * g(s, d, s, heads, dt, F, sms, W)
        attn_b += n_scores * (5 * dt + 1) / W
    split = t if sp else 1
    per_token = 2 * 2 * h / split * dt + 2 * (3 * h / split * dt + h / split) + 2 * 4 * h / t * dt
    return dense_f, dense_b, attn_f, attn_b, tok * per_token / W, 2 * tok * per_token / W


def enumerate_configs_reference(model, cluster, schedules=(0, 1, 2, 3), virtual_stages=None, recompute=(0, 1, 2),
                                zero=(0, 1, 2, 3), max_micro_batch=16):  # fmt: skip
    """The configuration table as plain nested loops, in the documented order: tensor degree
    (powers of two up to the node and the heads, dividing both the heads and the GPUs), pipeline
    degree (divisors of the layers dividing the GPUs left), data degree (dividing the batch),
    microbatch size (divisors of a replica's batch up to the largest), then sequence parallelism,
    schedule (interleaved once per chunk count dividing a stage's layers, with p > 1 and the
    microbatches divisible by p), recomputation and ZeRO (beyond 0 with data parallelism only)."""
    L, a, N, gb = model.layers, model.heads, cluster.gpus, model.global_batch
    rows = []
    t = 1
    while t <= min(cluster.gpus_per_node, a):
        if a % t == 0 and N % t == 0:
            for p in range(1, min(L, N // t) + 1):
                if L % p or (N // t) % p:
                    continue
                d = N // (t * p)
                if gb % d:
                    continue
                per = gb // d
                vs = [v for v in range(2, L // p + 1) if (L // p) % v == 0]
                if virtual_stages is not None:
                    vs = [v for v in vs if v in set(virtual_stages)]
                for b in range(1, min(per, max_micro_batch) + 1):
                    if per % b:
                        continue
                    m = per // b
                    block = []
                    for sp in (0, 1) if t > 1 else (0,):
                        for sc in schedules:
                            for v in (vs if (p > 1 and m % p == 0) else []) if sc == 2 else [1]:
                                for rec in recompute:
                                    for z in zero:
                                        if z == 0 or d > 1:
                                            block.append((t, p, d, b, m, sc, v, rec, z, sp))
                    rows += block
        t *= 2
    return rows
