from setuptools import setup

setup(
    name="kernel-lab",
    version="0.1.0",
    description="Hand-written CUDA and Triton kernels side by side, checked, timed and counted by one harness",
    python_requires=">=3.10",
    packages=["compare", "specs", "triton_src", "cuda_src"],
    package_data={"cuda_src": ["*.cu", "*.cuh", "*.h"]},
    install_requires=["torch", "triton", "ninja", "tabulate", "numpy", "matplotlib"],
    # cluster: --cluster ADDRESS runs the rows as Ray tasks (compare/cluster.py); nothing else needs Ray.
    # peers: other projects' kernels that specs name as peer rows (Liger-Kernel's norms); they need a GPU, so CI
    # leaves them out and those rows are reported as skipped.
    extras_require={"test": ["pytest"], "cluster": ["ray>=2.40"], "peers": ["liger-kernel"]},
    entry_points={"console_scripts": ["kernel-lab=compare.cli:main"]},
)
