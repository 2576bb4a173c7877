"""Model catalogue: what a training step of a network costs, in FLOPs, bytes and kernels.

Each :class:`ModelSpec` describes one network as trained in a study: parameters, forward FLOPs
and saved activation bytes per sample, the number of GPU kernels a step launches, the precision
of its matrix multiplies, and the statistical side (batch-size range, epochs, a gradient-noise
scale). The oracle (:mod:`fastsched.catalog.oracle`) turns it into step and sync times.

The six applications of the Pollux (OSDI'21) and Sia (SOSP'23) studies are described by the
networks those studies trained (the training scripts of the Pollux artifact and the published
architectures; FLOPs count a multiply-add as two):

=========== ================================= ========== ============== ============ ==========
name        network (data)                    parameters fwd FLOP/sample activations samples/ep
=========== ================================= ========== ============== ============ ==========
cifar10     ResNet-18, 32x32 (CIFAR-10)        11.2 M     1.1 G          7 MB         50,000
imagenet    ResNet-50, 224x224, AMP (ImageNet) 25.6 M     8.2 G          100 MB       1,281,167
bert        BERT-base, seq 384 (SQuAD 1.1)     110 M      71 G           450 MB       88,641
deepspeech2 DeepSpeech2, 5 x 800 biGRU         41.2 M     25 G           100 MB       7,140
yolov3      YOLOv3, 320-608 px, AMP (VOC)      62 M       66 G           800 MB       16,551
ncf         NeuMF, 32 + 128 factors (ML-1M)    1.6 M      87 k           2 kB         4,970,845
=========== ================================= ========== ============== ============ ==========

Activation bytes are the FP32 feature maps a step writes and reads back (ResNet: every conv,
norm and activation output; BERT: Korthikanti et al. 2022's ``s h (34 + 5 a s / h)`` bytes per
layer at half precision, doubled for FP32): the basis of the memory traffic. The two networks
trained with mixed precision (apex AMP, O1) hold less in memory (``memory_bytes``): two saved
half-precision tensors per conv output, 11.1 M conv-output elements per 224 px image for
ResNet-50 (Radosavovic et al. 2020's activation count) and about 80 M at YOLOv3's largest
608 px scale. ResNet-18's 3x3 stride-1 convolutions hold 89 % of its FLOPs (the three
stride-2 ones and the 1x1 shortcuts the rest): in FP32, cuDNN runs them as Winograd transforms
(``winograd_share``). ImageNet and YOLOv3 train in mixed precision (``precision="fp16"``), as
the Pollux benchmark's scripts do (apex AMP O1). DeepSpeech2 is the script's default network (five bidirectional GRU layers of
800 after two convolutions, about 104 MFLOP per output frame) on VoxForge clips of about 5 s;
its 7,140 training clips are the first part of the study's VoxForge split. Its recurrent layers
run about 240 dependent time steps (4.8 s at 10 ms, halved by the convolutions' stride) in each
of 5 layers and 2 directions, with about 3 kernels per step forward and 5 backward:
19,200 kernels in a chain (``serial_kernels``). The script (adapted from deepspeech.pytorch) pads
every clip of a batch to the batch's longest in its collate function, batches come from AdaptDL's
shuffling loader (no length buckets), and the model packs the padded batch before the GRU layers:
the two convolutions (41x11 and 21x11, 32 channels: 5.2 of
the 25 GFLOP per clip, ``padded_share`` 0.2) and the GRU's chain of time steps run over the
longest clip, the GRU's matrix products over each clip's own frames. Clip lengths are taken as
log-normal with a log-standard deviation of 0.35 (``length_spread``; an assumption for read
single sentences, whose lengths follow their word counts, set before any comparison with the
traces: no published length distribution of the study's clips was found). NCF is NeuMF with 32
GMF and 128 MLP factors on MovieLens-1M (6,040 users, 3,706 items), trained with Adam (16
bytes of state per parameter) on each of the 994,169 ratings and 4 sampled negatives per
epoch. Kernel counts are about three per forward operator (forward and two backward) plus
three per parameter tensor (an unfused optimizer).

Decoder-only transformers (``gpt-125m`` ... ``gpt-175b``, ``llama-70b``) use the shapes of
the GPT-3 paper (Brown et al. 2020, Table 2.1; 13B with hidden 5120) and Llama 2 70B's depth and
width, in BF16 with sequence length 2048 (4096 for 70B), with FlashAttention (no stored
attention matrix). Their costs come from
:class:`fastsched.costmodel.search.Transformer` (one definition of the transformer formulas).

Gradient-noise defaults (:attr:`ModelSpec.noise_scale`: the simple noise scale
``B_simple = tr(Sigma) / |G|^2`` in samples at the start and end of training) are order-of-
magnitude values chosen from the literature, not fitted to any measurement. McCandlish et al. 2018
(*An Empirical Model of Large-Batch Training*) find that the noise scale grows as the loss falls,
by an order of magnitude or more over a run, and that ImageNet's largest useful batch reaches
tens of thousands; Goyal et al. 2017 train ResNet-50 at 8,192 without loss. The image and speech
models here rise from 10^2 to 10^4 samples (ImageNet from 10^3 to 3 x 10^4); BERT fine-tuning,
two epochs from a pre-trained model, from 10^2 to 10^3. For language models Kaplan et al. 2020
(eq. 1.4) give the critical batch ``B_crit(L) = 2e8 tokens / L^(1/0.21)`` as the loss ``L``
(nats) falls. Override them with ``noise_scale=``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from fastsched._datafile import read_data_file

__all__ = ["ModelSpec", "MODELS", "model_spec", "decoder_spec", "load_model_spec", "known_models", "check_model"]


#: Model families (:attr:`ModelSpec.family`).
FAMILIES = ("vision", "language", "speech", "recommendation", "decoder")
#: Largest count of a model (batch sizes, kernels, samples): every integer up to it is exact as a float.
MAX_MODEL_INT = 2**53
#: Most epochs of a model (a profile writes one validation row per epoch and batch size).
MAX_EPOCHS = 10_000
#: Largest size of a model (parameters, FLOPs, bytes, noise scale): the oracle's times stay finite.
MAX_MODEL_VALUE = 1e30
#: Largest log-standard deviation of a sample's length (a 20x spread between typical samples).
MAX_LENGTH_SPREAD = 1.5
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class ModelSpec(NamedTuple):
    """One network's training-step costs and statistical settings.

    Attributes
    ----------
    name, family : str
        ``family`` is one of ``"vision"``, ``"language"``, ``"speech"``, ``"recommendation"``,
        ``"decoder"``.
    parameters : float
        Trainable parameters.
    flops_per_sample : float
        Forward FLOPs per sample (the backward pass costs twice as much).
    activation_bytes : float
        Activation bytes kept per sample for the backward pass.
    kernels : int
        GPU kernels launched per step (host-bound overhead of eager frameworks).
    precision : str
        Matrix-multiply precision: ``"tf32"`` (FP32 training; TF32 where the GPU has it) or
        ``"bf16"`` (mixed precision).
    state_bytes_per_param : float
        Bytes per parameter of weights, gradients and optimizer state (FP32 SGD with momentum:
        12; mixed-precision Adam: 16).
    grad_bytes_per_param : float
        Bytes per parameter all-reduced each step.
    init_batch_size, max_batch_size, min_local_bsz : int
        Batch of statistical efficiency 1, the largest total batch, the smallest per-GPU batch.
    max_epochs : int
        Epochs to completion.
    samples_per_epoch : int
        Dataset size.
    noise_scale : tuple of float
        Gradient-noise scale (samples) at the start and end of training.
    fixed_batch : bool
        Train at ``init_batch_size`` only (scale GPUs, not batch; LLM pre-training).
    transformer : tuple or None
        ``(layers, hidden, heads, seq, vocab, dtype_bytes)`` of a decoder, for the strategy
        search of models too large for data parallelism.
    memory_bytes : float or None
        Activation bytes per sample held in GPU memory, where they differ from
        ``activation_bytes`` (the memory traffic's basis): mixed-precision training keeps its
        saved activations in half precision. ``None``: ``activation_bytes``.
    winograd_share : float
        Share of the forward FLOPs in 3x3 stride-1 convolutions trained in FP32, which cuDNN
        runs as Winograd F(2x2, 3x3) transforms with 2.25 times fewer multiplies (Lavin & Gray
        2016); half-precision tensor-core convolutions use implicit GEMM instead (share 0).
    serial_kernels : int
        GPU kernels per step that each wait for the one before whatever the batch (a recurrent
        layer's time steps), each taking at least a kernel's launch latency on the GPU.
    length_spread : float
        Log-standard deviation of a sample's length, for models whose samples vary in length
        and are padded to their batch's longest (0: every sample costs the same). The per-sample
        costs above are at the mean length.
    padded_share : float
        Share of the per-sample FLOPs and bytes computed on the padded batch (layers that run
        over every frame of the longest sample); the rest (packed recurrent layers) pays each
        sample's own length. The chain of ``serial_kernels`` always runs the longest.

    Examples
    --------
    >>> m = model_spec("imagenet")
    >>> m.parameters, m.family, m.precision
    (25600000.0, 'vision', 'fp16')
    """

    name: str
    family: str
    parameters: float
    flops_per_sample: float
    activation_bytes: float
    kernels: int
    precision: str
    state_bytes_per_param: float
    grad_bytes_per_param: float
    init_batch_size: int
    max_batch_size: int
    min_local_bsz: int
    max_epochs: int
    samples_per_epoch: int
    noise_scale: tuple
    fixed_batch: bool = False
    transformer: tuple | None = None
    memory_bytes: float | None = None
    winograd_share: float = 0.0
    serial_kernels: int = 0
    length_spread: float = 0.0
    padded_share: float = 1.0

    @property
    def held_bytes(self) -> float:
        """Activation bytes per sample held in GPU memory (``memory_bytes``, else ``activation_bytes``).

        Examples
        --------
        >>> model_spec("imagenet").held_bytes < model_spec("imagenet").activation_bytes
        True
        """
        return self.activation_bytes if self.memory_bytes is None else self.memory_bytes


def _study(name, family, params, flops, act, kernels, init_b, max_b, min_local, epochs, samples, noise, **kw):
    return ModelSpec(name, family, params, flops, act, kernels, "tf32", 12.0, 4.0, init_b, max_b, min_local, epochs,
                     samples, noise)._replace(**kw)  # fmt: skip


#: The six study applications (batch sizes and epochs as in the Pollux/Sia studies).
# fmt: off
STUDY_MODELS = {
    m.name: m
    for m in (
        _study("cifar10", "vision", 11.2e6, 1.11e9, 6.7e6, 400, 128, 4096, 32, 100, 50_000, (100.0, 10_000.0),
               winograd_share=0.89),
        _study("imagenet", "vision", 25.6e6, 8.2e9, 1.0e8, 1530, 200, 12_800, 20, 90, 1_281_167, (1_000.0, 30_000.0),
               memory_bytes=4.44e7, precision="fp16"),
        _study("bert", "language", 110e6, 7.1e10, 4.5e8, 1700, 12, 384, 4, 2, 88_641, (100.0, 1_000.0)),
        _study("deepspeech2", "speech", 41.2e6, 2.5e10, 1.0e8, 300, 20, 640, 10, 80, 7_140, (100.0, 10_000.0),
               serial_kernels=19_200, length_spread=0.35, padded_share=0.2),
        _study("yolov3", "vision", 62e6, 8.5e10, 1.03e9, 2150, 8, 512, 4, 50, 16_551, (100.0, 10_000.0),
               memory_bytes=3.2e8, precision="fp16"),
        _study("ncf", "recommendation", 1.6e6, 8.7e4, 2.0e3, 80, 32_768, 32_768, 32, 10, 4_970_845, (1e4, 1e5),
               state_bytes_per_param=16.0),
    )
}
# fmt: on

#: Decoder shapes ``(layers, hidden, heads, seq, vocab)``.
_DECODERS = {
    "gpt-125m": (12, 768, 12, 2048, 51200),
    "gpt-350m": (24, 1024, 16, 2048, 51200),
    "gpt-760m": (24, 1536, 16, 2048, 51200),
    "gpt-1.3b": (24, 2048, 16, 2048, 51200),
    "gpt-2.7b": (32, 2560, 32, 2048, 51200),
    "gpt-6.7b": (32, 4096, 32, 2048, 51200),
    "gpt-13b": (40, 5120, 40, 2048, 51200),
    "gpt-175b": (96, 12288, 96, 2048, 51200),
    "llama-70b": (80, 8192, 64, 4096, 32000),
}


def decoder_spec(name, layers, hidden, heads, seq, vocab, *, dtype_bytes=2, global_batch=512, tokens=None,
                 fixed_batch=True) -> ModelSpec:  # fmt: skip
    """Describe a decoder-only transformer as a :class:`ModelSpec` (one sample = one sequence).

    Parameters
    ----------
    name : str
    layers, hidden, heads, seq, vocab : int
        Shape (``hidden`` a multiple of ``heads``).
    dtype_bytes : int
        2 for BF16/FP16 mixed precision (Adam state in FP32: 16 bytes per parameter).
    global_batch : int
        Sequences per step (pre-training keeps it: ``fixed_batch``).
    tokens : float, optional
        Training tokens (default 20 per parameter, the compute-optimal ratio of Hoffmann et al.
        2022); one "epoch" is a fixed slice of them (see ``max_epochs``).
    fixed_batch : bool

    Examples
    --------
    >>> m = decoder_spec("tiny", 2, 64, 4, 16, 100)
    >>> m.family, m.fixed_batch, m.transformer
    ('decoder', True, (2, 64, 4, 16, 100, 2))
    """
    from fastsched.costmodel.search import Transformer  # deferred: the cost model loads numba

    t = Transformer(layers=layers, hidden=hidden, heads=heads, seq=seq, vocab=vocab, global_batch=1,
                    dtype_bytes=dtype_bytes)  # fmt: skip
    params = t.parameters
    flops = t.flops_per_step(recompute=False) / 3.0  # forward of one sequence
    # Korthikanti et al. 2022: s h (34 + 5 a s / h) bytes per layer at 16 bits, no recomputation;
    # the 5 a s / h term is the attention matrix, which FlashAttention (Dao et al. 2022, the norm
    # in LLM training since) never stores.
    act = layers * seq * hidden * 34.0 * dtype_bytes / 2.0
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, (int, float)) or
                               not 0 < tokens <= MAX_MODEL_VALUE):  # fmt: skip
        raise ValueError(f"model.tokens must be a positive number <= {MAX_MODEL_VALUE:g}, got {tokens!r}")
    total_tokens = 20.0 * params if tokens is None else float(tokens)
    epochs = 100  # progress is reported in hundredths of the token budget
    samples = max(int(total_tokens / seq / epochs), global_batch)
    # Kaplan et al. 2020: B_crit = 2e8 tokens / L^(1/0.21); L from ~4 to ~2 nats during training.
    noise = (2e8 / 4.0 ** (1 / 0.21) / seq, 2e8 / 2.0 ** (1 / 0.21) / seq)
    kernels = 20 * layers + 10
    return ModelSpec(name, "decoder", params, flops, act, kernels, "bf16", 16.0, float(dtype_bytes), global_batch,
                     global_batch, 1, epochs, samples, noise, fixed_batch,
                     (layers, hidden, heads, seq, vocab, dtype_bytes))  # fmt: skip


def known_models() -> list[str]:
    """Names :func:`model_spec` knows.

    Examples
    --------
    >>> "cifar10" in known_models() and "gpt-1.3b" in known_models()
    True
    """
    return sorted(STUDY_MODELS) + sorted(_DECODERS)


#: Global batch in sequences: the GPT-3 paper's batch in tokens (Brown et al. 2020, Table 2.1:
#: 0.5M up to 760M, 1M for 1.3B/2.7B, 2M for 6.7B/13B, 3.2M for 175B) over 2048-token sequences;
#: Llama 2's 4M tokens over 4096 for 70B.
DECODER_BATCH = {
    "gpt-125m": 256,
    "gpt-350m": 256,
    "gpt-760m": 256,
    "gpt-1.3b": 512,
    "gpt-2.7b": 512,
    "gpt-6.7b": 1024,
    "gpt-13b": 1024,
    "gpt-175b": 1536,
    "llama-70b": 1024,
}


def _decoder_batch(name):
    return DECODER_BATCH[name]


MODELS = tuple(known_models())


def model_spec(name) -> ModelSpec:
    """Return the catalogue's :class:`ModelSpec` of ``name``.

    Raises
    ------
    ValueError
        An unknown name (the message lists the known ones).

    Examples
    --------
    >>> round(model_spec("gpt-1.3b").parameters / 1e9, 2)
    1.32
    """
    if not isinstance(name, str):
        raise TypeError(f"model name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key in STUDY_MODELS:
        return STUDY_MODELS[key]
    if key in _DECODERS:
        return decoder_spec(key, *_DECODERS[key], global_batch=_decoder_batch(key))
    raise ValueError(f"unknown model {name!r}; known models: {known_models()}")


def load_model_spec(path) -> ModelSpec:
    """Read a user's model: ``plan``'s transformer JSON, or a :class:`ModelSpec`'s fields.

    Parameters
    ----------
    path : str or path
        JSON with ``layers, hidden, heads, seq, vocab, global_batch[, dtype_bytes]`` (the
        format ``fastsched plan`` reads; an optional ``name``, ``tokens``, ``fixed_batch``), or
        with the :class:`ModelSpec` fields (``noise_scale`` a two-item list).

    Examples
    --------
    >>> import json, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "m.json")
    >>> _ = open(p, "w").write(json.dumps({"layers": 2, "hidden": 64, "heads": 4, "seq": 16,
    ...                                    "vocab": 100, "global_batch": 8}))
    >>> m = load_model_spec(p)
    >>> m.name, m.init_batch_size, m.family
    ('m', 8, 'decoder')
    """
    path = Path(path)
    data = read_data_file(path, what="model file")  # names the file: missing, not UTF-8, not JSON
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a model file holds a JSON object")
    data = dict(data)
    name = str(data.pop("name", path.stem))
    if "layers" in data:
        extra = sorted(set(data) - {"layers", "hidden", "heads", "seq", "vocab", "global_batch", "dtype_bytes",
                                    "tokens", "fixed_batch"})  # fmt: skip
        if extra:
            raise ValueError(f"{path}: unknown field(s) {extra}")
        missing = [k for k in ("layers", "hidden", "heads", "seq", "vocab", "global_batch") if k not in data]
        if missing:
            raise ValueError(f"{path}: missing field(s) {missing}")
        return check_model(decoder_spec(name, data["layers"], data["hidden"], data["heads"], data["seq"],
                                        data["vocab"], dtype_bytes=data.get("dtype_bytes", 2),
                                        global_batch=data["global_batch"], tokens=data.get("tokens"),
                                        fixed_batch=data.get("fixed_batch", True)))  # fmt: skip
    fields = set(ModelSpec._fields) - {"name"}
    extra = sorted(set(data) - fields)
    if extra:
        raise ValueError(f"{path}: unknown field(s) {extra}; known: {sorted(fields)}")
    missing = sorted(f for f in fields - set(data) if f not in ModelSpec._field_defaults)
    if missing:
        raise ValueError(f"{path}: missing field(s) {missing}")
    for f in ("noise_scale", "transformer"):  # JSON lists; anything else is named by check_model
        if isinstance(data.get(f), list):
            data[f] = tuple(data[f])
    return check_model(ModelSpec(name=name, **data))


def check_model(m: ModelSpec) -> ModelSpec:
    """Validate a :class:`ModelSpec` (errors name the field); return it.

    Counts are at most :data:`MAX_MODEL_INT`, epochs at most :data:`MAX_EPOCHS` (the profile
    writes a row per epoch) and sizes at most :data:`MAX_MODEL_VALUE`, so the oracle's times stay
    finite; the name becomes a folder name, so it is one plain path component.

    Examples
    --------
    >>> check_model(model_spec("ncf")).name
    'ncf'
    >>> check_model(model_spec("ncf")._replace(name="../x"))
    Traceback (most recent call last):
    ...
    ValueError: model.name must be a plain name (letters, digits, '_', '.', '-'), got '../x'
    """
    if not isinstance(m.name, str) or not _NAME.match(m.name):
        raise ValueError(f"model.name must be a plain name (letters, digits, '_', '.', '-'), got {m.name!r}")
    if m.family not in FAMILIES:
        raise ValueError(f"model.family must be one of {list(FAMILIES)}, got {m.family!r}")
    for f in ("parameters", "flops_per_sample", "activation_bytes", "state_bytes_per_param", "grad_bytes_per_param"):
        v = getattr(m, f)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v <= MAX_MODEL_VALUE):
            raise ValueError(f"model.{f} must be a positive number <= {MAX_MODEL_VALUE:g}, got {v!r}")
    for f in ("kernels", "init_batch_size", "max_batch_size", "min_local_bsz", "max_epochs", "samples_per_epoch"):
        v, high = getattr(m, f), MAX_EPOCHS if f == "max_epochs" else MAX_MODEL_INT
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= high:
            raise ValueError(f"model.{f} must be an integer in [1, {high}], got {v!r}")
    v = m.serial_kernels
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_MODEL_INT:
        raise ValueError(f"model.serial_kernels must be an integer in [0, {MAX_MODEL_INT}], got {v!r}")
    v = m.length_spread
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= v <= MAX_LENGTH_SPREAD):
        raise ValueError(f"model.length_spread must be in [0, {MAX_LENGTH_SPREAD:g}], got {v!r}")
    v = m.padded_share
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= v <= 1.0):
        raise ValueError(f"model.padded_share must be in [0, 1], got {v!r}")
    w = m.winograd_share
    if isinstance(w, bool) or not isinstance(w, (int, float)) or not (0.0 <= w <= 1.0):
        raise ValueError(f"model.winograd_share must be in [0, 1], got {w!r}")
    if m.memory_bytes is not None:
        v = m.memory_bytes
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v <= MAX_MODEL_VALUE):
            raise ValueError(f"model.memory_bytes must be a positive number <= {MAX_MODEL_VALUE:g} or None, got {v!r}")
    if m.max_batch_size < m.init_batch_size:
        raise ValueError(f"model.max_batch_size={m.max_batch_size} < model.init_batch_size={m.init_batch_size}")
    if m.precision not in ("tf32", "fp32", "bf16", "fp16"):
        raise ValueError(f"model.precision must be one of tf32, fp32, bf16, fp16, got {m.precision!r}")
    ns = m.noise_scale
    if not (isinstance(ns, tuple) and len(ns) == 2 and all(_number(v) and 0 < v <= MAX_MODEL_VALUE for v in ns)):
        raise ValueError(f"model.noise_scale must be two positive numbers (start, end), got {ns!r}")
    if not isinstance(m.fixed_batch, bool):
        raise ValueError(f"model.fixed_batch must be true or false, got {m.fixed_batch!r}")
    t = m.transformer
    if t is not None and not (isinstance(t, tuple) and len(t) == 6 and all(_count(v) for v in t)):
        raise ValueError(f"model.transformer must be (layers, hidden, heads, seq, vocab, dtype_bytes), got {t!r}")
    return m


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_MODEL_INT
