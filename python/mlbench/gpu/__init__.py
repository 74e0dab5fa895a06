"""mlbench.gpu: the tools of a GPU session (scripts/gpu_session.sh, scripts/gpu_verify.sh), each a module to run with
python3 -m (the wrappers in scripts/ and the bundle's bin/ run the same):

    mlbench.gpu.pair             paired step times and traces for the projection's measured error (gpu_pair.py)
    mlbench.gpu.required         cases a GPU check requires ok and verified (gpu_required.py)
    mlbench.gpu.steady_compare   two runs of the same compute cases: state and how far each ceiling moved
    mlbench.gpu.pytorch_compare  mlbench's ceilings against PyTorch on the same GPU (needs torch with CUDA)

Standard library only; torch is imported by pair's collect and pytorch_compare when they run.
"""
