"""Simulator inputs: workloads, production-log readers, cluster descriptions and presets."""
