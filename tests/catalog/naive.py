"""Plain references of the oracle's formulas, written from the semantics with scalar arithmetic."""

import math
import warnings

from scipy import integrate, stats


def padded_ratio(m, spread):
    """E[longest of m log-normal lengths] / E[length], from E[max] = integral of (1 - F(x)^m) dx."""
    if spread == 0.0 or m == 1:
        return 1.0
    dist = stats.lognorm(s=spread)  # median 1: the ratio does not depend on the scale
    lo, hi = dist.ppf(1e-16), dist.isf(1e-18 / m)  # below lo, 1 - F^m is 1 to double precision
    with warnings.catch_warnings():  # quad may flag round-off near its tolerance, far below the tests' 1e-6
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        rest, _ = integrate.quad(lambda x: 1.0 - dist.cdf(x) ** m, lo, hi, limit=400, epsabs=1e-10, epsrel=1e-9)
    return (lo + rest) / dist.mean()


def peak_flops(gpu, precision):
    table = {"bf16": gpu.bf16_tflops, "fp16": gpu.bf16_tflops, "tf32": gpu.tf32_tflops, "fp32": gpu.fp32_tflops}
    return table[precision] * 1e12


def ring_allreduce(grad_bytes, gpu, placement, link_eff, lat_intra=10e-6, lat_inter=30e-6, fixed=0.0):
    used = [c for c in placement if c > 0]
    n = sum(used)
    if n == 1:
        return 0.0
    if len(used) == 1:
        bandwidth, latency = gpu.intra_gbps, lat_intra
    else:
        bandwidth, latency = min(gpu.intra_gbps, gpu.network_gbps), lat_inter
    volume = 2.0 * (n - 1) / n * grad_bytes  # each rank sends and receives this much
    return fixed + volume / (bandwidth * 1e9 * link_eff) + 2 * (n - 1) * latency


def dp_step(model, gpu, placement, b, eff, link_eff, host_per_kernel, bucket=25e6, overlap=0.0, fixed=0.0, passes=3.0,
            floor=0.0, gpu_scale=1.0, host_scale=1.0, contention=0.0, node_sync=0.0, hop_latency=0.0):  # fmt: skip
    winograd = model.winograd_share
    # padded samples: the padded share of the per-sample work and the chain of dependent kernels
    # run at the longest of all the step's samples (the replicas wait for the slowest GPU)
    r = padded_ratio(min(sum(placement) * b, model.samples_per_epoch), model.length_spread)
    pad = (1.0 - model.padded_share) + model.padded_share * r
    # forward + backward (twice the forward); Winograd's 3x3 convolutions do 1/2.25 of the multiplies
    flops = 3.0 * model.flops_per_sample * ((1.0 - winograd) + winograd / 2.25) * b * pad
    # the recurrent share runs on the CUDA cores at the FP32 peak, the rest at the model's precision
    flop_s = flops * (1.0 - model.fp32_share) / (peak_flops(gpu, model.precision) * eff) + flops * model.fp32_share / (
        peak_flops(gpu, "fp32") * eff
    )
    traffic = passes * model.activation_bytes * b * pad + 2.0 * model.state_bytes_per_param * model.parameters
    gpu_s = flop_s + traffic / (gpu.memory_gbps * 1e9 * eff)
    backward_s = (2.0 / 3.0) * flop_s + (2.0 / 3.0) * passes * model.activation_bytes * b * pad / (
        gpu.memory_gbps * 1e9 * eff
    )
    chain = model.serial_kernels * 4e-6 * r  # dependent kernels at the GPU's launch latency
    gpu_s = (gpu_s + chain) * gpu_scale
    backward_s = (backward_s + (2.0 / 3.0) * chain) * gpu_scale
    host_s = model.kernels * host_per_kernel * host_scale
    grad = model.grad_bytes_per_param * model.parameters
    used = [c for c in placement if c > 0]
    ar = ring_allreduce(grad, gpu, placement, link_eff, fixed=fixed)
    per_node = gpu.gpus_per_node
    share = 1.0 if per_node == 1 else (min(max(used), per_node) - 1) / (per_node - 1)
    if len(used) == 1 and used[0] > 1:  # one node: its GPUs' shared path, at least
        ar = max(ar, node_sync * share)
    n = sum(used)
    if n > 1:  # each of the ring's 2 (n - 1) steps waits the measured latency, by the fullest node's share
        ar += 2 * (n - 1) * hop_latency * share
    # host launches and the GPU overlap partly: their 2-norm; the node's GPUs contend for it
    k = 1.0 + contention * share
    compute = math.sqrt(host_s**2 + gpu_s**2) * k
    # the backward pass hides the all-reduce, but only for the time the GPU adds to the host's
    window = min(overlap * backward_s * k, compute - host_s * k)
    exposed = max(ar * min(1.0, bucket / grad), ar - window)
    # the machine's per-step floor gates the whole step
    return max(floor, compute + exposed), exposed
