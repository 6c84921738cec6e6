"""A worker process as compare.isolate starts one, except that its CUDA context counts as lost after every call.

That is the state a row with an illegal memory access leaves a worker in on a GPU: compare.isolate._serve sends the
row's result, sees worker.cuda_context_healthy() is False, closes its pipe and exits. Forcing that check to False
reproduces the sequence on any machine, GPU or not (tests/test_planted.py). Workers import this module by
name, so it is a plain module on sys.path, not a test file.
"""


def serve_with_lost_context(conn, *setup) -> None:
    from compare import isolate, worker

    worker.cuda_context_healthy = lambda: False
    isolate._serve(conn, *setup)  # the real serving loop
