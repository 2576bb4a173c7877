"""The packed layout of an encoding: every field in one int64 array (the floats as their bits).

One estimate is then one kernel call with three array arguments; the fields of
:class:`~.encode.EncodedProgram` are read-only views of the packed segments
(``_estimate.INT_FIELDS`` / ``FLOAT_FIELDS``).
"""

from __future__ import annotations

from itertools import accumulate, chain

import numpy as np

from fastsched.costmodel._estimate import FLOAT_FIELDS, INT_FIELDS, pack

__all__ = ["join_packed", "with_packed"]


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _ptr(xs):
    return np.array([0, *accumulate(x.shape[0] for x in xs)], np.int64)


def _pack_parts(cols):
    # pack() of the int and the float fields over per-rank parts into one int64 array (the
    # floats as their bits), one concatenation per kind; returns (packed, its int part, its
    # float part, the fields as read-only views)
    ki, kf = len(INT_FIELDS), len(FLOAT_FIELDS)
    head_i = list(accumulate((sum(map(len, cols[f])) for f in INT_FIELDS), initial=ki + 1))
    head_f = list(accumulate((sum(map(len, cols[f])) for f in FLOAT_FIELDS), initial=kf + 1))
    ni = head_i[-1]
    out = np.empty(ni + head_f[-1], np.int64)
    packed_i = out[:ni]
    packed_f = out[ni:].view(np.float64)
    np.concatenate([np.array(head_i, np.int64), *chain.from_iterable(cols[f] for f in INT_FIELDS)], out=packed_i)
    np.concatenate(
        [np.array(head_f, np.float64), *chain.from_iterable(cols[f] for f in FLOAT_FIELDS)],
        out=packed_f,
        casting="unsafe",
    )
    out.flags.writeable = False
    fields, packed_i, packed_f = _fields_of(out)
    return out, packed_i, packed_f, fields


def _fields_of(packed):
    # the fields of a (read-only) packed array as views of it, from its two headers; the
    # bool persistable field is a copy of its int segment
    ki, kf = len(INT_FIELDS), len(FLOAT_FIELDS)
    head_i = packed[: ki + 1].tolist()
    ni = head_i[-1]
    packed_i = packed[:ni]
    packed_f = packed[ni:].view(np.float64)
    head_f = list(map(int, packed_f[: kf + 1].tolist()))
    fields = {f: packed_i[head_i[i] : head_i[i + 1]] for i, f in enumerate(INT_FIELDS)}
    fields.update({f: packed_f[head_f[i] : head_f[i + 1]] for i, f in enumerate(FLOAT_FIELDS)})
    fields["persistable"] = _frozen(fields["persistable"].astype(np.bool_))
    return fields, packed_i, packed_f


def join_packed(packed_i, packed_f):
    """One int64 array holding ``packed_i`` then the bits of ``packed_f`` (the kernel's input).

    Examples
    --------
    >>> import numpy as np
    >>> j = join_packed(np.array([1, 2]), np.array([0.5]))
    >>> j[:2].tolist(), j[2:].view(np.float64).tolist(), j.flags.writeable
    ([1, 2], [0.5], False)
    """
    out = np.concatenate((packed_i, np.ascontiguousarray(packed_f, np.float64).view(np.int64)))
    out.flags.writeable = False
    return out


def with_packed(enc):
    """Return ``enc`` (an :class:`~.encode.EncodedProgram`) with its packed arrays and an empty settings cache.

    The layout below the encoding: this module does not import :mod:`.encode` (which imports it).

    Examples
    --------
    >>> from fastsched.costmodel import encode
    >>> enc = encode({"vars": [{"name": "x"}], "ops": []})
    >>> with_packed(enc._replace(packed_i=None)).packed_i.tolist() == enc.packed_i.tolist()
    True
    """
    d = enc._asdict()
    d["persistable"] = enc.persistable.astype(np.int64)
    pi, pf = pack(d, INT_FIELDS, np.int64), pack(d, FLOAT_FIELDS, np.float64)
    return enc._replace(packed_i=pi, packed_f=pf, packed=join_packed(pi, pf), cache={})
