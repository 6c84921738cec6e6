"""Triton implementations, one module per op; functions marked ``@variant(name)`` are the rows ``triton:<name>``."""
import functools
import inspect
import os

import torch
import triton
import triton.language as tl
from triton import knobs
from triton.runtime.driver import driver as triton_driver

try:  # the host-side TMA descriptor (the same constructor in Triton 3.6 and 3.8)
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # an older Triton: kernels take their pointer paths
    TensorDescriptor = None


def descriptor(t: torch.Tensor, block_shape: list[int] | None = None):
    """A host-side tensor descriptor of t. Without block_shape, a placeholder: a config's pre_hook sets the real one
    before every launch (a descriptor's block shape is part of it, and each autotune config has its own)."""
    return TensorDescriptor(t, list(t.shape), list(t.stride()), block_shape or [1] * t.dim())


@functools.cache
def sm_count(device: torch.device, on_interpreter: int) -> int:
    """The multiprocessors of the device's GPU, for a grid sized to fill it; on_interpreter where there is none
    (Triton's CPU interpreter runs programs one at a time: each op picks the count its CPU tests need)."""
    return torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else on_interpreter


def cdiv(a: int, b: int) -> int:
    """ceil(a / b) of host integers, for grids and block counts worked out on every call. triton.cdiv and
    triton.next_power_of_2 are constexpr_functions (Triton 3.6 and 3.8), whose wrapper cost the host about a
    microsecond a call on an H200 host (timed alone), and the norms' and softmax's launchers call them several times a
    call, on the launch paths each op's `direct` step is about."""
    return -(-a // b)


def next_power_of_2(n: int) -> int:
    """The smallest power of two at least n (0 for n = 0), as triton.next_power_of_2, without its wrapper."""
    return 1 << (n - 1).bit_length() if n > 0 else 0


def runs_ptx(t: torch.Tensor) -> bool:
    """Whether a kernel launched on t runs as compiled PTX (a GPU tensor, not Triton's CPU interpreter), for the
    constexpr of a kernel that has an inline-PTX path."""
    return t.is_cuda and os.environ.get("TRITON_INTERPRET") != "1"


LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def exp2_ftz(a, PTX: tl.constexpr):
    """2^a in fp32 as one MUFU.EX2: PTX's ex2.approx.ftz.f32. tl.exp2 and tl.exp lower to ex2.approx.f32, which
    keeps subnormal results and costs a compare and two multiplies around each MUFU.EX2 in the SASS. Results below
    2^-126 flush to 0, as with CUDA's __expf. Triton's interpreter runs no PTX: with PTX false, tl.exp2."""
    if PTX:
        return tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=f,f", [a], dtype=tl.float32, is_pure=True,
                                         pack=1)
    else:
        return tl.exp2(a)


@triton.jit
def exp_ftz(x, PTX: tl.constexpr):
    """e^x as exp2_ftz(x·log2(e))."""
    return exp2_ftz(x * LOG2E, PTX)


def as_written(kernel):
    """A kernel launched as Triton's tutorials write it, kernel[grid](...): the launches of every step but those
    that go through launcher() (each op's `direct` step)."""
    return kernel


def _specialization(arg):
    """What of one argument may decide which compiled kernel a launch takes: a tensor's dtype, device and 16-byte
    alignment (Triton specializes pointers on it, not on their values); an integer's value (Triton specializes on
    1, on divisibility by 16 and on 32 or 64 bits, and an autotuner's key may hold it); a float's type only (never
    specialized); None for an argument of any other kind, which sends the call through kernel[grid]."""
    if isinstance(arg, torch.Tensor):
        return arg.dtype, arg.get_device(), arg.data_ptr() % 16 == 0
    if isinstance(arg, (bool, int)):
        return type(arg), arg
    if isinstance(arg, float):
        return float
    return None


def launch_hooks_set() -> bool:
    """Whether a launch hook is set (a profiler such as Proton sets one), which must see every launch with its
    metadata. Since Triton 3.5 each hook is a HookChain, never None, and set when it holds a call; before, a hook was
    set when it was not None. (Testing `is None` alone on Triton 3.6 took every repeated launch through
    CompiledKernel[grid], building the metadata and calling the empty chains each time.)"""
    return any(hook is not None and bool(getattr(hook, "calls", True))
               for hook in (knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook))


class Launcher:
    """kernel[grid](*args, **meta) with the Python that Triton runs on every launch done once per specialization.

    A launch through kernel[grid] binds the arguments to the kernel's parameters, works out their specialization
    (each tensor's dtype and alignment, each integer's properties), turns it into a cache key and finds the compiled
    kernel; an autotuned kernel first builds its tuning key (its key parameters' values and every tensor's dtype)
    and finds the config it chose. All of it is Python, on every call: tens of microseconds a launch, more than a
    short kernel takes (results/nvidia-h200/host-overhead.md, the `host` columns of the softmax and norm tables).
    A Launcher keys its own cache on those properties or finer ones (_specialization of each positional argument,
    an integer by its whole value, and every keyword's value), in one pass over the arguments. The first call at a
    key goes through kernel[grid], compiling and autotuning as usual, and keeps the compiled kernel it launched and
    the values of the parameters after the positional ones; a later call at that key hands the arguments to the
    compiled kernel's C launcher (CompiledKernel.run) with the current stream, as CompiledKernel[grid] does, less
    the closure that call builds and the launch hooks' metadata, which is only built where a hook is set
    (launch_hooks_set; a profiler such as Proton sets one: then the call goes through CompiledKernel[grid], hooks and
    all). Under Triton's interpreter, for a grid given as a function, for arguments of another kind, and for a
    config with a pre_hook (which must run before every launch), every call goes through kernel[grid]; so does a
    first call whose autotuner did not keep the configuration it ran (choice_kept), until one that does."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.compiled = {}
        jit = kernel
        while hasattr(jit, "fn") and not isinstance(jit, triton.runtime.JITFunction):
            jit = jit.fn
        # Under Triton's interpreter the kernels are interpreted functions, with nothing compiled to launch.
        self.params = (list(inspect.signature(jit.fn).parameters.values())
                       if isinstance(jit, triton.runtime.JITFunction) else None)

    def __getitem__(self, grid):
        return lambda *args, **meta: self.launch(grid, args, meta)

    def launch(self, grid, args, meta):
        if self.params is None or callable(grid):
            return self.kernel[grid](*args, **meta)
        key = (*map(_specialization, args), *meta.items())
        found = self.compiled.get(key)
        if found is not None:
            compiled, later = found
            grid = (*grid, 1, 1)
            if not launch_hooks_set():
                driver = triton_driver.active
                # CompiledKernel[grid]'s runner, inlined: (grid, stream, function, its metadata, no launch metadata,
                # no hooks, then every parameter, constexprs too)
                compiled.run(grid[0], grid[1], grid[2], driver.get_current_stream(driver.get_current_device()),
                             compiled.function, compiled.packed_metadata, None, None, None, *args, *later)
            else:
                compiled[grid[:3]](*args, *later)
            return compiled
        compiled = self.kernel[grid](*args, **meta)
        config = getattr(self.kernel, "best_config", None)
        if compiled is None or None in key[:len(args)] or (config is not None and config.pre_hook is not None):
            return compiled
        if config is not None and not choice_kept(self.kernel, args, meta, config):
            return compiled  # a choice its autotuner let go of: the next call at this key chooses again
        values = {**meta, **(config.kwargs if config is not None else {})}
        later = []
        for p in self.params[len(args):]:
            if p.name not in values and p.default is inspect.Parameter.empty:
                return compiled  # a parameter this launch did not name: leave it to kernel[grid]
            later.append(values.get(p.name, p.default))
        self.compiled[key] = (compiled, tuple(later))
        return compiled


def tuning_key(tuner, args, meta) -> tuple:
    """The key under which Triton's Autotuner.run files its choice for this launch: the values of its key
    parameters, then the dtype of every tensor argument (triton/runtime/autotuner.py, alike from Triton 3.0 to 3.8;
    tests/test_launcher.py checks it against the Triton installed)."""
    named = {**dict(zip(tuner.arg_names, args)), **meta}
    bound = {name: value for name, value in named.items() if name in tuner.arg_names}
    return tuple([bound[name] for name in tuner.keys if name in bound]
                 + [str(value.dtype) for value in bound.values() if hasattr(value, "dtype")])


def choice_kept(tuner, args, meta, config) -> bool:
    """Whether an autotuned kernel's launch ran a configuration its autotuner still holds as its choice for the
    launch's tuning key (or the autotuner has one configuration only). A choice made and then let go must not
    outlive that launch in a Launcher: the lab's harness makes a row's first call at a timed shape with every
    configuration launched once untimed and the choice so made forgotten (compare/worker.py: compile_case), so that
    the next call times them; a Launcher that kept it would run that untimed pick at every later call, the timed
    ones included, and the autotuner would never choose."""
    if len(getattr(tuner, "configs", ())) <= 1:
        return True
    try:
        return tuner.cache.get(tuning_key(tuner, args, meta)) is config
    except (AttributeError, TypeError):  # an autotuner unlike Triton's: keep nothing, every call goes through it
        return False


_launchers: dict[int, Launcher] = {}


def launcher(kernel) -> Launcher:
    """The one Launcher of a kernel, kept by the kernel's id (a JITFunction's hash takes a lock on every lookup)."""
    found = _launchers.get(id(kernel))
    if found is None:
        found = _launchers[id(kernel)] = Launcher(kernel)
    return found
