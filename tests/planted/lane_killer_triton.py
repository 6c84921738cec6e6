"""A row that kills the process driving it: the lane of a multi-GPU or cluster run (a Ray task's process), not only
its own worker. It stands for whatever takes a whole node's task down (out of host memory, a node lost). Used by
tests/test_cluster.py: the other lanes' rows must come through."""
import multiprocessing
import os
import signal

import torch

from compare.spec import variant


@variant("kills_its_lane")
def kills_its_lane(x: torch.Tensor) -> torch.Tensor:
    # The process that started the worker (the lane's); its parent in the process tree is the fork server
    os.kill(multiprocessing.parent_process().pid, signal.SIGKILL)
    return x
