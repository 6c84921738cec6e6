"""Triton implementations, one module per op; functions marked ``@variant(name)`` are the rows ``triton:<name>``."""
import functools

import torch


@functools.cache
def sm_count(device: torch.device, on_interpreter: int) -> int:
    """The multiprocessors of the device's GPU, for a grid sized to fill it; on_interpreter where there is none
    (Triton's CPU interpreter runs programs one at a time: each op picks the count its CPU tests need)."""
    return torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else on_interpreter
