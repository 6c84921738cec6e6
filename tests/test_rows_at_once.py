"""--check-rows N (compare/runner.py): several rows checked at once on one GPU, while a timed cell and the kernel
accounting have the GPU alone. The gate must never let a timing overlap a check, and rows checked at once must get
exactly the checks they get one after another."""


def test_a_timed_section_waits_for_the_checks_in_flight_and_holds_back_new_ones():
    import threading
    import time

    from compare.runner import _GpuGate

    gate, log = _GpuGate(), []
    check_started, release_check = threading.Event(), threading.Event()

    def check(name, hold=None):
        with gate.shared():
            log.append(f"{name} in")
            if hold:
                check_started.set()
                hold.wait(5)
            log.append(f"{name} out")

    def timing():
        with gate.exclusive():
            log.append("timing in")
            time.sleep(0.1)
            log.append("timing out")

    first = threading.Thread(target=check, args=("check 1", release_check))
    first.start()
    check_started.wait(5)
    timed = threading.Thread(target=timing)
    timed.start()
    time.sleep(0.1)
    later = threading.Thread(target=check, args=("check 2",))  # asks while the timing waits: goes after it
    later.start()
    time.sleep(0.1)
    assert log == ["check 1 in"]  # the timing waits for check 1, and check 2 waits for the timing
    release_check.set()
    for t in (first, timed, later):
        t.join(5)
    assert log == ["check 1 in", "check 1 out", "timing in", "timing out", "check 2 in", "check 2 out"]


def test_rows_checked_at_once_get_the_same_checks_as_one_after_another():
    from compare import discover, runner

    op = discover.load_op("gelu")
    impls = [i for i in discover.implementations(op) if i.name in ("triton:basic", "triton:tuned", "torch:eager")]
    one = runner.run_op(op, runner.Options(capture=False, progress=False), impls)
    three = runner.run_op(op, runner.Options(capture=False, progress=False, check_rows=3), impls)
    assert [r.status for r in three.rows] == [r.status for r in one.rows] == ["ok"] * 3

    def key(c):
        return (c.impl, c.dtype, c.shape, c.inputs, c.seed, c.ok)

    assert sorted(map(key, three.checks)) == sorted(map(key, one.checks))
